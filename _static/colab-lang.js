// The "Open in Colab" button follows the language switch: notebooks/ko/… for 한국어 and for
// both languages, notebooks/en/… for English. The switch (lang-switch.js) records its mode in
// <html data-book-lang="ko|en|both">; this script rewrites the Colab links whenever it changes.
(function () {
  "use strict";
  var PATTERN = /\/notebooks\/(ko|en)\//;

  function update() {
    var mode = document.documentElement.getAttribute("data-book-lang");
    var lang = mode === "en" ? "en" : "ko";
    var links = document.querySelectorAll("a[href*='colab.research.google.com']");
    for (var i = 0; i < links.length; i++) {
      var href = links[i].getAttribute("href");
      if (PATTERN.test(href)) {
        links[i].setAttribute("href", href.replace(PATTERN, "/notebooks/" + lang + "/"));
      }
    }
  }

  new MutationObserver(update).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ["data-book-lang"],
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", update);
  } else {
    update();
  }
})();
