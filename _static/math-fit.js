// Display equations that do not fit their column (phones, a narrow window): each is set smaller,
// down to MIN_SCALE of its size, until it fits; one still wider scrolls sideways inside its box,
// and then carries the class math-scrolls, whose shadows (_static/book.css) show at the edge
// beyond which more of it lies. Runs once MathJax has typeset the page, again when the window
// changes size or the language switch shows other equations; then sets <html data-math-fitted>.
// tools/pdf.py fits the printed equations the same way at the paper's width.
(function () {
  "use strict";
  var MIN_SCALE = 0.75;

  function fit() {
    var all = document.querySelectorAll("article mjx-container[display='true']");
    for (var i = 0; i < all.length; i++) {
      var box = all[i];
      var math = box.querySelector("mjx-math");
      if (!math || !box.getClientRects().length) continue;
      box.style.fontSize = "";
      var width = math.getBoundingClientRect().width;
      if (width > box.clientWidth + 0.5) {
        var scale = Math.max(MIN_SCALE, (box.clientWidth - 2) / width);
        box.style.fontSize = (scale * 100).toFixed(1) + "%";
        width = math.getBoundingClientRect().width;
      }
      box.classList.toggle("math-scrolls", width > box.clientWidth + 0.5);
    }
    document.documentElement.setAttribute("data-math-fitted", "1");
  }

  var pending = null;
  function later() {
    if (pending) clearTimeout(pending);
    pending = setTimeout(function () { pending = null; fit(); }, 100);
  }

  function start(tries) {
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(fit);
    } else if (!document.querySelector("div.math") || tries > 100) {
      fit();
    } else {
      setTimeout(function () { start(tries + 1); }, 100);
    }
  }

  window.addEventListener("resize", later);
  new MutationObserver(later).observe(document.documentElement, {
    attributes: true, attributeFilter: ["data-book-lang"]
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { start(0); });
  } else {
    start(0);
  }
})();
