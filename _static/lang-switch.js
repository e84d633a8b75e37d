// Language switch for the bilingual book: 한국어 (default) / English / both.
// The choice is kept in localStorage so it survives reloads and other pages.
(function () {
  "use strict";
  var KEY = "d2lite-book-lang";
  var MODES = [
    ["ko", "한국어"],
    ["en", "English"],
    ["both", "둘 다 · Both"],
  ];

  function stored() {
    try {
      var v = window.localStorage.getItem(KEY);
      return v === "ko" || v === "en" || v === "both" ? v : "ko";
    } catch (e) {
      return "ko";
    }
  }

  function apply(mode) {
    document.documentElement.setAttribute("data-book-lang", mode);
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
