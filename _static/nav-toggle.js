// The navigation toggle (the ☰ buttons). pydata-sphinx-theme 0.17 puts a second ".primary-toggle"
// in the page next to sphinx-book-theme's, and binds only the first one it finds
// (pydata-sphinx-theme issue #2451; the desktop collapse is issue #2067), so on phones the
// visible button does nothing and on desktops the chapter list cannot be hidden. This script
// handles every ".primary-toggle" itself, before the theme's handlers: on a wide screen it
// collapses or restores the chapter list, on a narrow one it opens it in the theme's dialog.
(function () {
  "use strict";
  var WIDE = "(min-width: 960px)";

  function openOnPhone() {
    var dialog = document.getElementById("pst-primary-sidebar-modal");
    var sidebar = document.getElementById("pst-primary-sidebar");
    if (!dialog || !sidebar || dialog.open) return;
    while (sidebar.firstChild) dialog.appendChild(sidebar.firstChild);
    dialog.classList.add("book-nav-dialog");
    dialog.addEventListener(
      "close",
      function () {
        while (dialog.firstChild) sidebar.appendChild(dialog.firstChild);
      },
      { once: true }
    );
    dialog.showModal();
  }

  document.addEventListener(
    "click",
    function (event) {
      var button = event.target.closest && event.target.closest(".primary-toggle");
      var dialog = document.getElementById("pst-primary-sidebar-modal");
      if (!button) {
        if (dialog && dialog.open && (event.target === dialog || event.target.closest("a"))) {
          dialog.close(); // a tap outside the list, or on a link in it
        }
        return;
      }
      event.preventDefault();
      event.stopPropagation();
      if (window.matchMedia(WIDE).matches) {
        document.documentElement.classList.toggle("book-nav-collapsed");
      } else {
        openOnPhone();
      }
    },
    true
  );
})();
