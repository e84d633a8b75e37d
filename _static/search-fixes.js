// The site's search (Sphinx's searchtools.js), tuned for this book:
// * snippets come from the article only (not the page's menus, buttons and language switch),
//   with formulas as plain text instead of raw TeX such as \(96\times 96\);
// * a page whose title holds the query ranks above pages that only mention it, the page with
//   the shortest such title first (트랜스포머 → "트랜스포머 · The Transformer").
// searchtools.js defines its Scorer only when none is defined, so this one is used whether it
// loads before or after it.
var Scorer = {
  score: function (result) {
    // titles carry per-language spans (_ext/bilingual.py): score their text, not the markup
    var title = String(result[1] || "").replace(/<[^>]*>/g, "").toLowerCase();
    var anchor = result[2];
    var score = result[4];
    var query = (new URLSearchParams(window.location.search).get("q") || "").trim().toLowerCase();
    if (!query || anchor) return score;
    var words = query.split(/\s+/);
    var all = words.every(function (w) {
      return title.indexOf(w) !== -1;
    });
    if (!all) return score;
    // A title holding every query word: ahead of the rest, shorter titles first.
    return score + 50 + Math.round((40 * query.length) / Math.max(title.length, 1));
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

(function () {
  "use strict";
  var NOISE = [
    ".headerlink", "script", "style", "nav", "button", "form", "noscript",
    ".lang-switch", ".bd-header-article", ".header-article-items", ".prev-next-area",
    ".bd-footer-article", ".bd-sidebar-secondary", ".toctree-wrapper", ".copybtn",
    "summary", ".toggle-hidden", "mjx-container", "mjx-assistive-mml", ".MathJax",
  ];
  var SYMBOLS = {
    times: "×", cdot: "·", le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠",
    approx: "≈", in: "∈", to: "→", rightarrow: "→", leftarrow: "←", infty: "∞", sum: "∑",
    prod: "∏", sqrt: "√", partial: "∂", nabla: "∇", top: "ᵀ", ldots: "…", dots: "…",
    cdots: "…", alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", theta: "θ",
    lambda: "λ", mu: "μ", sigma: "σ", tau: "τ", phi: "φ", omega: "ω", pi: "π",
    Delta: "Δ", Sigma: "Σ", mathbb: "", mathbf: "", mathrm: "", text: "", operatorname: "",
  };

  var OPERATORS = ["times", "cdot", "le", "leq", "ge", "geq", "ne", "neq", "approx", "in", "to",
    "rightarrow", "leftarrow"];

  // A formula's TeX as plain text: no delimiters, backslashes, braces or ^ and _.
  function texToText(tex) {
    return tex
      .replace(/^\s*(\\\(|\\\[|\$\$?)/, "")
      .replace(/(\\\)|\\\]|\$\$?)\s*$/, "")
      .replace(/\\begin\{[^}]*\}|\\end\{[^}]*\}/g, " ")
      .replace(/\\([A-Za-z]+)/g, function (_, name) {
        if (!Object.prototype.hasOwnProperty.call(SYMBOLS, name)) return "";
        return OPERATORS.indexOf(name) >= 0 ? " " + SYMBOLS[name] + " " : SYMBOLS[name];
      })
      .replace(/\\[,;:! ]|\\\\|&/g, " ")
      .replace(/\\./g, "")
      .replace(/[{}^_]/g, "")
      .replace(/\s+/g, " ")
      .trim();
  }

  function htmlToText(htmlString, anchor) {
    var doc = new DOMParser().parseFromString(htmlString, "text/html");
    var root = doc.querySelector("article.bd-article") || doc.querySelector('[role="main"]');
    if (!root) return "";
    NOISE.forEach(function (sel) {
      root.querySelectorAll(sel).forEach(function (el) {
        el.remove();
      });
    });
    root.querySelectorAll(".math").forEach(function (el) {
      el.textContent = " " + texToText(el.textContent) + " ";
    });
    var block = (anchor && root.querySelector(anchor)) || root;
    return block.textContent.replace(/\s+/g, " ").trim();
  }

  window.d2liteSearchText = { htmlToText: htmlToText, texToText: texToText };

  function install() {
    if (typeof Search !== "undefined" && Search.htmlToText) Search.htmlToText = htmlToText;
  }
  install();
  document.addEventListener("DOMContentLoaded", install);
})();
