(function () {
  "use strict";
  function init(root) {
    if (root.getAttribute("data-ready")) return;
    root.setAttribute("data-ready", "1");
    var data = JSON.parse(root.querySelector("script.av-data").textContent);
    var Q = data.q, K = data.k, lead = data.lead, digits = data.digits;
    var sel = lead.map(function () { return 0; });
    var tau0 = data.tau, tau = data.tau;
    var cells = root.querySelectorAll(".av-cell");
    var qs = root.querySelectorAll(".av-query"), ks = root.querySelectorAll(".av-key");
    var readout = root.querySelector(".av-readout");
    var W = null, focus = null;
    function base() {
      var o = 0;
      for (var a = 0; a < lead.length; a++) o = o * lead[a] + sel[a];
      return o * Q * K;
    }
    function current() {
      var o = base();
      if (!data.s || tau === tau0) return data.w.slice(o, o + Q * K);
      var out = new Array(Q * K);
      for (var i = 0; i < Q; i++) {
        var m = -Infinity, j, v;
        for (j = 0; j < K; j++) {
          v = data.s[o + i * K + j];
          if (v !== null && v / tau > m) m = v / tau;
        }
        var z = 0;
        for (j = 0; j < K; j++) {
          v = data.s[o + i * K + j];
          out[i * K + j] = v === null ? 0 : Math.exp(v / tau - m);
          z += out[i * K + j];
        }
        for (j = 0; j < K; j++) out[i * K + j] /= z;
      }
      return out;
    }
    function fmt(v) { return v.toFixed(digits); }
    function clamp(v) { return Math.max(0, Math.min(1, v)); }
    function tint(v) { return "rgba(203,24,29," + clamp(v).toFixed(3) + ")"; }
    // Text over a tinted cell: black or white, whichever contrasts more with the tint blended
    // over the page's own background (light or dark theme); one of them always reaches 4.5:1.
    var page = [255, 255, 255];
    function findBackground() {
      for (var el = root; el; el = el.parentElement) {
        var m = getComputedStyle(el).backgroundColor.match(/[\d.]+/g);
        if (m && (m.length < 4 || +m[3] > 0.5)) return [+m[0], +m[1], +m[2]];
      }
      return [255, 255, 255];
    }
    function lum(c) {
      var x = c.map(function (v) {
        v /= 255;
        return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
      });
      return 0.2126 * x[0] + 0.7152 * x[1] + 0.0722 * x[2];
    }
    function ink(v) {
      var a = clamp(v), red = [203, 24, 29];
      var L = lum(red.map(function (c, i) { return a * c + (1 - a) * page[i]; }));
      return (1.05) / (L + 0.05) > (L + 0.05) / 0.05 ? "#fff" : "#000";
    }
    function paint() {
      W = current();
      page = findBackground();
      for (var n = 0; n < cells.length; n++) {
        var v = W[n];
        cells[n].style.backgroundColor = tint(v);
        cells[n].style.color = ink(v);
        cells[n].setAttribute("data-value", fmt(v));
        cells[n].title = fmt(v);
      }
      if (focus) show(focus[0], focus[1]);
    }
    function label(el) { return el.textContent; }
    function show(kind, i) {
      focus = [kind, i];
      var n;
      for (n = 0; n < cells.length; n++) {
        var on = kind === "q" ? Math.floor(n / K) === i : n % K === i;
        cells[n].classList.toggle("av-on", on);
        cells[n].textContent = on ? fmt(W[n]) : "";
      }
      for (n = 0; n < Q; n++) qs[n].classList.toggle("av-on", kind === "q" && n === i);
      for (n = 0; n < K; n++) ks[n].classList.toggle("av-on", kind === "k" && n === i);
      while (readout.firstChild) readout.removeChild(readout.firstChild);
      var head = document.createElement("span");
      head.className = "av-head";
      head.textContent = label(kind === "q" ? qs[i] : ks[i]) + " \u2192";
      head.style.fontWeight = "700";
      readout.appendChild(head);
      var count = kind === "q" ? K : Q;
      for (n = 0; n < count; n++) {
        var v = kind === "q" ? W[i * K + n] : W[n * K + i];
        var item = document.createElement("span");
        item.className = "av-item";
        item.setAttribute(kind === "q" ? "data-key" : "data-query", String(n));
        var tok = document.createElement("span");
        tok.textContent = label(kind === "q" ? ks[n] : qs[n]);
        var val = document.createElement("span");
        val.className = "av-val";
        val.textContent = fmt(v);
        val.style.backgroundColor = tint(v);
        val.style.color = ink(v);
        item.appendChild(tok);
        item.appendChild(val);
        readout.appendChild(item);
      }
    }
    function bind(list, kind) {
      Array.prototype.forEach.call(list, function (el, i) {
        var go = function () { show(kind, i); };
        el.addEventListener("mouseenter", go);
        el.addEventListener("focus", go);
        el.addEventListener("click", go);
        el.addEventListener("keydown", function (e) {
          var step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[e.key];
          if (!step) return;
          e.preventDefault();
          list[(i + step + list.length) % list.length].focus();
        });
      });
    }
    bind(qs, "q");
    bind(ks, "k");
    Array.prototype.forEach.call(root.querySelectorAll("select[data-axis]"), function (s) {
      s.addEventListener("change", function () {
        sel[+s.getAttribute("data-axis")] = +s.value;
        paint();
      });
    });
    var slider = root.querySelector("input.av-temp");
    if (slider) {
      var shown = root.querySelector("output.av-tau");
      slider.addEventListener("input", function () {
        var x = +slider.value;
        tau = x === 0 ? tau0 : tau0 * Math.pow(2, x);
        shown.textContent = tau.toFixed(2);
        paint();
      });
    }
    paint();
    // The theme's light/dark toggle changes the background under the view: repaint.
    new MutationObserver(paint).observe(document.documentElement, {
      attributes: true, attributeFilter: ["data-theme", "class"],
    });
  }
  var roots = document.querySelectorAll('.attention-view[data-av="__ID__"]');
  for (var r = 0; r < roots.length; r++) init(roots[r]);
})();
