// Language switch for the bilingual book: 한국어 (default) / English / both.
// The choice is kept in localStorage so it survives reloads and other pages.
(function () {
  "use strict";
  var KEY = "d2lite-book-lang";
  var MODES = [
    ["ko", "한국어"],
    ["en", "English"],
    ["both", "둘 다 · Both"],  // split by splitLabels: "둘 다" in Korean mode, "Both" in English
  ];

  function stored() {
    try {
      var v = window.localStorage.getItem(KEY);
      return v === "ko" || v === "en" || v === "both" ? v : "ko";
    } catch (e) {
      return "ko";
    }
  }

  var HANGUL = /[\uac00-\ud7a3]/;
  var SEP = " · ";
  var originalTitle = null;

  // "한국어 · English" → ["한국어", "English"] when one half is Korean and the other is not.
  function pair(text) {
    var t = text.trim();
    var k = t.indexOf(SEP);
    if (k < 0 || t.indexOf(SEP, k + 1) >= 0) return null;
    var ko = t.slice(0, k).trim();
    var en = t.slice(k + SEP.length).trim();
    if (!ko || !en || !HANGUL.test(ko) || HANGUL.test(en)) return null;
    return [ko, en];
  }

  function span(cls, text) {
    var s = document.createElement("span");
    s.className = cls;
    s.textContent = text;
    return s;
  }

  // Labels that the theme writes as plain text (sidebar, breadcrumbs, previous/next, captions,
  // buttons): a text node that is exactly "한국어 · English" becomes one span per language.
  function splitLabels(root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (n) {
        var p = n.parentElement;
        if (!p || p.closest("pre, code, script, style, textarea, .lang-ko, .lang-en, .lang-sep")) {
          return NodeFilter.FILTER_REJECT;
        }
        return pair(n.nodeValue) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP;
      },
    });
    var found = [];
    while (walker.nextNode()) found.push(walker.currentNode);
    found.forEach(function (n) {
      var halves = pair(n.nodeValue);
      var box = document.createDocumentFragment();
      box.appendChild(span("lang-ko", halves[0]));
      box.appendChild(span("lang-sep", SEP));
      box.appendChild(span("lang-en", halves[1]));
      n.parentNode.replaceChild(box, n);
    });
  }

  // The browser tab: each "한국어 · English" part of the title in the reader's language.
  function retitle(mode) {
    if (originalTitle === null) originalTitle = document.title;
    if (mode === "both") {
      document.title = originalTitle;
      return;
    }
    document.title = originalTitle
      .split(" — ")
      .map(function (part) {
        var halves = pair(part);
        return halves ? halves[mode === "en" ? 1 : 0] : part;
      })
      .join(" — ");
  }

  // The theme's interface labels, which Sphinx writes in the site's language (Korean), in
  // English for the English mode.
  var UI = {
    "내용": "Contents",
    "검색": "Search",
    "검색...": "Search...",
    "이전": "Previous",
    "다음": "Next",
    "색인": "Index",
    "PDF로 인쇄": "Print to PDF",
    "소스 저장소": "Source repository",
    "소스 파일 다운로드": "Download source file",
    "노트북 파일 다운로드": "Download notebook file",
    "이 페이지 다운로드": "Download this page",
    "전체 화면으로보기": "Fullscreen mode",
    "전체 화면 모드": "Fullscreen mode",
    "다크 모드": "Dark mode",
    "라이트 모드": "Light mode",
  };
  var LABEL_ATTRS = ["title", "aria-label", "placeholder", "data-bs-title", "data-bs-original-title"];

  function relabel(mode) {
    if (!document.body) return;
    var chrome = document.querySelectorAll(
      ".bd-header, .bd-header-article, .bd-sidebar-secondary, .prev-next-area, .bd-footer, " +
        ".bd-sidebar-primary, #pst-search-dialog, .search-button-field"
    );
    for (var i = 0; i < chrome.length; i++) {
      var walker = document.createTreeWalker(chrome[i], NodeFilter.SHOW_TEXT);
      while (walker.nextNode()) {
        var n = walker.currentNode;
        var ko = n.bookKo || n.nodeValue.trim();
        if (!UI[ko]) continue;
        n.bookKo = ko;
        n.nodeValue = n.nodeValue.replace(n.nodeValue.trim(), mode === "en" ? UI[ko] : ko);
      }
      var els = chrome[i].querySelectorAll("*");
      for (var j = 0; j < els.length; j++) {
        LABEL_ATTRS.forEach(function (attr) {
          var key = "bookKo-" + attr;
          var value = els[j][key] || els[j].getAttribute(attr);
          if (!value || !UI[value.trim()]) return;
          els[j][key] = value;
          els[j].setAttribute(attr, mode === "en" ? UI[value.trim()] : value);
        });
      }
    }
  }

  function apply(mode) {
    document.documentElement.setAttribute("data-book-lang", mode);
    retitle(mode);
    relabel(mode);
    document.documentElement.setAttribute("lang", mode === "en" ? "en" : "ko");
    var buttons = document.querySelectorAll(".lang-switch button");
    for (var i = 0; i < buttons.length; i++) {
      var b = buttons[i];
      b.setAttribute("aria-pressed", b.getAttribute("data-mode") === mode ? "true" : "false");
    }
  }

  function choose(mode) {
    try {
      window.localStorage.setItem(KEY, mode);
    } catch (e) {
      /* private mode: the choice lasts for this page only */
    }
    apply(mode);
  }

  function build() {
    if (document.querySelector(".lang-switch")) {
      apply(stored()); // loaded twice: one switch is enough
      return;
    }
    var box = document.createElement("div");
    box.className = "lang-switch";
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", "언어 · Language");
    MODES.forEach(function (m) {
      var b = document.createElement("button");
      b.type = "button";
      b.setAttribute("data-mode", m[0]);
      b.textContent = m[1];
      b.addEventListener("click", function () {
        choose(m[0]);
      });
      box.appendChild(b);
    });
    var slot =
      document.querySelector(".article-header-buttons") ||
      document.querySelector(".header-article-items__end") ||
      document.querySelector("main") ||
      document.body;
    slot.insertBefore(box, slot.firstChild);
    splitLabels(document.body);
    var marks = document.querySelectorAll(".lang-ko, .lang-en");
    for (var i = 0; i < marks.length; i++) {
      marks[i].setAttribute("lang", marks[i].classList.contains("lang-ko") ? "ko" : "en");
    }
    apply(stored());
  }

  apply(stored()); // before first paint, so the hidden language never flashes
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", build);
  } else {
    build();
  }
})();
