// report.html's tables, sorted and filtered in the page: every column
// header sorts its table (again: the other way), and a table of more than
// ten rows gets a filter box. Progressive enhancement: without script
// the page shows every row of every table, and the groups' members open
// as <details> do. A cell's data-v, where it has one, is what it sorts by
// (the raw number behind "1,234" or "12.5%"); an empty value sorts last
// either way.
(function () {
  "use strict";
  var each = function (list, f) { Array.prototype.forEach.call(list, f); };

  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) return "";
    var v = cell.getAttribute("data-v");
    return v !== null ? v : cell.textContent.trim();
  }

  function sortable(table) {
    var body = table.tBodies[0];
    var head = table.tHead && table.tHead.rows[0];
    if (!body || !head) return;
    each(head.cells, function (th, col) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () {
        var ascending = th.getAttribute("aria-sort") !== "ascending";
        each(head.cells, function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        var numeric = rows.every(function (r) {
          var k = key(r, col);
          return k === "" || !isNaN(Number(k));
        });
        rows.sort(function (x, y) {
          var a = key(x, col), b = key(y, col);
          if (a === b) return 0;
          if (a === "") return 1;
          if (b === "") return -1;
          var c = numeric ? Number(a) - Number(b) : a.localeCompare(b);
          return ascending ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }

  function filterable(table) {
    var body = table.tBodies[0];
    if (!body || body.rows.length <= 10) return;
    var box = document.createElement("div");
    box.className = "filter";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "Filter rows";
    input.setAttribute("aria-label", "Filter the rows of this table");
    var shown = document.createElement("span");
    box.appendChild(input);
    box.appendChild(shown);
    var at = table.parentNode.classList.contains("tw") ? table.parentNode : table;
    at.parentNode.insertBefore(box, at);
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase(), n = 0;
      each(body.rows, function (r) {
        var hit = q === "" || r.textContent.toLowerCase().indexOf(q) >= 0;
        r.hidden = !hit;
        if (hit) n++;
      });
      shown.textContent = q === "" ? "" : n + " of " + body.rows.length + " rows";
    });
  }

  each(document.querySelectorAll("main table"), function (t) {
    sortable(t);
    filterable(t);
  });
})();
