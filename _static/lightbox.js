// Figures click to enlarge: a click or tap on a figure's image (or Enter/Space when it has the
// keyboard focus) shows it at full size over the page; Esc, a click anywhere or the close
// button closes it, and the focus goes back to the image.
(function () {
  "use strict";
  var SELECTOR = "article figure img, article .cell_output img, article img.d2l-figure";
  var overlay = null;
  var opener = null;

  function label() {
    return document.documentElement.getAttribute("data-book-lang") === "en"
      ? ["Enlarge the figure", "Close"]
      : ["그림 크게 보기 · Enlarge the figure", "닫기 · Close"];
  }

  function close() {
    if (!overlay) return;
    overlay.remove();
    overlay = null;
    document.removeEventListener("keydown", onKey, true);
    if (opener) opener.focus();
    opener = null;
  }

  function onKey(event) {
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Tab" && overlay) {
      event.preventDefault(); // the close button is the dialog's only control
      overlay.querySelector(".lightbox-close").focus();
    }
  }

  function open(img) {
    close();
    opener = img;
    overlay = document.createElement("div");
    overlay.className = "lightbox-overlay";
    overlay.setAttribute("role", "dialog");
    overlay.setAttribute("aria-modal", "true");
    overlay.setAttribute("aria-label", img.getAttribute("alt") || label()[0]);
    var big = document.createElement("img");
    big.src = img.currentSrc || img.src;
    big.alt = img.getAttribute("alt") || "";
    var button = document.createElement("button");
    button.type = "button";
    button.className = "lightbox-close";
    button.textContent = label()[1];
    overlay.appendChild(big);
    overlay.appendChild(button);
    overlay.addEventListener("click", close);
    document.addEventListener("keydown", onKey, true);
    document.body.appendChild(overlay);
    button.focus();
  }

  function setup() {
    var images = document.querySelectorAll(SELECTOR);
    for (var i = 0; i < images.length; i++) {
      var img = images[i];
      if (img.closest("a") || img.classList.contains("lightbox-target")) continue;
      img.classList.add("lightbox-target");
      img.setAttribute("tabindex", "0");
      img.setAttribute("role", "button");
      if (!img.getAttribute("title")) img.setAttribute("title", label()[0]);
      img.addEventListener("click", function (event) {
        open(event.currentTarget);
      });
      img.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          open(event.currentTarget);
        }
      });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
