// The glossary table (glossary-table directive) in the reader's language order: 가나다 by the
// Korean term in Korean mode and for both languages, A–Z by the English term in English mode.
(function () {
  "use strict";

  function sortTables() {
    var mode = document.documentElement.getAttribute("data-book-lang");
    var column = mode === "en" ? 0 : 1;
    var locale = mode === "en" ? "en" : "ko";
    var tables = document.querySelectorAll("table.glossary-table");
    for (var i = 0; i < tables.length; i++) {
      var body = tables[i].tBodies[0];
      if (!body) continue;
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].textContent.trim();
        var y = b.cells[column].textContent.trim();
        return x.localeCompare(y, locale, { sensitivity: "base" });
      });
      rows.forEach(function (row) {
        body.appendChild(row);
      });
      tables[i].setAttribute("data-sorted", locale);
    }
  }

  new MutationObserver(sortTables).observe(document.documentElement, {
    attributes: true,
    attributeFilter: ["data-book-lang"],
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", sortTables);
  } else {
    sortTables();
  }
})();
