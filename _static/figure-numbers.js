// Figure and equation numbers. The figures that chapters draw (d2l.bilingual) come as one <figure> per language,
// in the same order in both languages, so the k-th Korean and the k-th English figure of chapter c
// are both "c.k": 그림 c.k in Korean, Figure c.k in English. The chapter number is the one Sphinx
// put in front of the page's title.
(function () {
  "use strict";
  var WORD = { ko: "그림", en: "Figure" };
  var TABLE = { ko: "표", en: "Table" };

  function number() {
    var mark = document.querySelector("article h1 .section-number");
    var chapter = mark ? mark.textContent.replace(/[.\s]+$/, "").trim() : "";
    ["ko", "en"].forEach(function (lang) {
      var figures = document.querySelectorAll("article figure.d2l-figure.lang-" + lang);
      for (var k = 0; k < figures.length; k++) {
        var label = (chapter ? chapter + "." : "") + (k + 1);
        var caption = figures[k].querySelector("figcaption");
        if (!caption) {
          caption = document.createElement("figcaption");
          figures[k].appendChild(caption);
        }
        if (caption.querySelector(".figure-number")) continue;
        var tag = document.createElement("span");
        tag.className = "figure-number";
        tag.textContent = WORD[lang] + " " + label + (caption.textContent.trim() ? ": " : "");
        caption.insertBefore(tag, caption.firstChild);
        figures[k].id = figures[k].id || "fig-" + lang + "-" + label.replace(".", "-");
      }
      // Display equations: each is written once per language (the checker keeps the pairs'
      // math equal), so each language counts its own copies: (c.k) in both. The number and its
      // equation share one box (div.numbered-equation), so that print keeps them on one page.
      var equations = document.querySelectorAll("article .lang-" + lang + " div.math");
      for (var j = 0; j < equations.length; j++) {
        var parent = equations[j].parentNode;
        if (parent.classList.contains("numbered-equation")) continue;
        var number = document.createElement("span");
        number.className = "equation-number";
        number.textContent = "(" + (chapter ? chapter + "." : "") + (j + 1) + ")";
        var pair = document.createElement("div");
        pair.className = "numbered-equation";
        parent.insertBefore(pair, equations[j]);
        pair.appendChild(number);
        pair.appendChild(equations[j]);
      }
      // Tables of a chapter: those of this language's prose and those shared by both (code
      // output), numbered in order: 표 c.k / Table c.k, as a caption line above the table.
      if (!chapter) return;
      var tables = Array.prototype.filter.call(
        document.querySelectorAll("article table"),
        function (t) {
          var box = t.closest(".lang-ko, .lang-en");
          return !box || box.classList.contains("lang-" + lang);
        }
      );
      for (var t = 0; t < tables.length; t++) {
        var shared = !tables[t].closest(".lang-ko, .lang-en");
        var anchor = tables[t].closest(".pst-scrollable-table-container") || tables[t];
        var tag = document.createElement("p");
        tag.className = "table-number" + (shared ? " lang-" + lang : "");
        tag.setAttribute("lang", lang);
        tag.textContent = TABLE[lang] + " " + chapter + "." + (t + 1);
        anchor.parentNode.insertBefore(tag, anchor);
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", number);
  } else {
    number();
  }
})();
