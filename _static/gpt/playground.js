/* The GPT playground: every <div class="gpt-playground"> on the page becomes a small lab around
 * the book's GPT (gpt.js): a prompt, Generate / Step / Reset, temperature, top-k, top-p and seed;
 * at each step the tokens, the next-token distribution (removed and drawn candidates), one
 * head's attention over the context and the key-value cache growing by one row per block.
 *
 * Labels are written in both languages (.lang-ko / .lang-en spans) and the book's language
 * switch shows one of them. The model files are found next to this script.
 */
(function () {
  "use strict";
  // The website loads this script twice on a playground page: Jupyter Book adds every script
  // under _static to each page, and the notebook output that holds the widget names it too.
  // A second copy would build every widget again, with a second model of its own, and the
  // first copy's model, if it arrived first, would mark a detached widget ready.
  if (window.D2GPTPlayground) return;
  window.D2GPTPlayground = [];
  var script = document.currentScript;
  var BASE = script ? script.src.replace(/[^/]*$/, "") : "_static/gpt/";
  var modelPromise = null;
  var counter = 0;

  function getModel() {
    if (!modelPromise) modelPromise = window.D2GPT.load(BASE);
    return modelPromise;
  }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") e.textContent = attrs[k];
        else if (k === "cls") e.className = attrs[k];
        else e.setAttribute(k, attrs[k]);
      });
    }
    (children || []).forEach(function (c) {
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  // Both languages; the book's switch shows one.
  function t(ko, en) {
    var f = document.createDocumentFragment();
    f.appendChild(el("span", { cls: "lang-ko", lang: "ko", text: ko }));
    f.appendChild(el("span", { cls: "lang-en", lang: "en", text: en }));
    return f;
  }

  function field(id, ko, en, input) {
    input.id = id;
    var label = el("label", { for: id });
    label.appendChild(t(ko, en));
    return el("div", { cls: "gp-field" }, [label, input]);
  }

  function show(piece) {
    return piece.replace(/ /g, "\u2423").replace(/\n/g, "\u21b5").replace(/\t/g, "\u21e5");
  }

  function fmt(p) {
    return p >= 0.0995 ? (100 * p).toFixed(0) + "%" : (100 * p).toFixed(1) + "%";
  }

  function numberInput(value, min, max, step) {
    return el("input", { type: "number", value: String(value), min: String(min),
      max: String(max), step: String(step), inputmode: "decimal" });
  }

  function Playground(root) {
    var n = ++counter, id = function (s) { return "gp" + n + "-" + s; };
    this.root = root;
    root.classList.add("gp-root");
    root.textContent = "";
    var prompt = el("textarea", { rows: "2", spellcheck: "false" });
    prompt.value = root.getAttribute("data-prompt") || "트랜스포머는";
    this.inputs = {
      prompt: prompt,
      temperature: numberInput(0.8, 0.05, 3, 0.05),
      topK: numberInput(40, 0, 1024, 1),
      topP: numberInput(0.9, 0.01, 1, 0.01),
      seed: numberInput(1, 0, 4294967295, 1),
      steps: numberInput(30, 1, 120, 1),
    };
    var I = this.inputs;
    var btn = function (cls, ko, en) {
      var b = el("button", { type: "button", cls: "gp-btn " + cls });
      b.appendChild(t(ko, en));
      return b;
    };
    this.buttons = {
      generate: btn("gp-generate", "생성", "Generate"),
      step: btn("gp-step", "한 단계", "Step"),
      reset: btn("gp-reset", "처음으로", "Reset"),
    };
    var B = this.buttons;
    var controls = el("div", { cls: "gp-controls" }, [
      field(id("temp"), "온도", "Temperature", I.temperature),
      field(id("topk"), "top-k (0은 끔)", "top-k (0 = off)", I.topK),
      field(id("topp"), "top-p", "top-p", I.topP),
      field(id("seed"), "시드", "Seed", I.seed),
      field(id("steps"), "생성할 토큰 수", "Tokens to generate", I.steps),
    ]);
    this.status = el("p", { cls: "gp-status", role: "status", "aria-live": "polite" });
    this.status.appendChild(t("모델을 불러오는 중…", "Loading the model…"));
    this.tokens = el("div", { cls: "gp-tokens", "aria-label": "tokens" });
    this.dist = el("div", { cls: "gp-dist" });
    this.layerSel = el("select");
    this.headSel = el("select");
    this.attn = el("div", { cls: "gp-attn" });
    this.counterBox = el("p", { cls: "gp-counter" });
    this.cacheBox = el("div", { cls: "gp-cache-scroll", tabindex: "0" });
    var h = function (ko, en) { var x = el("h4", { cls: "gp-h" }); x.appendChild(t(ko, en)); return x; };
    root.appendChild(field(id("prompt"), "프롬프트 (한국어나 영어)", "Prompt (Korean or English)", prompt));
    root.appendChild(controls);
    root.appendChild(el("div", { cls: "gp-buttons" }, [B.generate, B.step, B.reset]));
    root.appendChild(this.status);
    root.appendChild(h("토큰", "Tokens"));
    root.appendChild(this.tokens);
    root.appendChild(h("다음 토큰의 분포", "Next-token distribution"));
    root.appendChild(this.dist);
    root.appendChild(h("어텐션", "Attention"));
    root.appendChild(el("div", { cls: "gp-controls" }, [
      field(id("layer"), "층", "Layer", this.layerSel),
      field(id("head"), "헤드", "Head", this.headSel),
    ]));
    root.appendChild(this.attn);
    root.appendChild(h("KV 캐시", "KV cache"));
    root.appendChild(this.counterBox);
    var cacheNote = el("p", { cls: "gp-legend" });
    cacheNote.appendChild(t(
      "표의 한 행이 한 위치입니다. 층마다 그 위치의 키 벡터 처음 세 값을 보여 줍니다. 값 벡터도 " +
        "같은 수의 행으로 쌓입니다. 파란 행이 이번 단계에 더해진 행입니다.",
      "One row per position: for each layer, the first three numbers of that position's key " +
        "vector (the values pile up in as many rows). The blue row is the one this step added."));
    root.appendChild(cacheNote);
    root.appendChild(this.cacheBox);
    [B.generate, B.step, B.reset].forEach(function (b) { b.disabled = true; });
    var self = this;
    B.step.addEventListener("click", function () { self.stop(); self.step(); });
    B.generate.addEventListener("click", function () { self.generate(); });
    B.reset.addEventListener("click", function () { self.reset(); });
    this.layerSel.addEventListener("change", function () { self.drawAttention(); });
    this.headSel.addEventListener("change", function () { self.drawAttention(); });
    prompt.addEventListener("input", function () { if (self.session) self.reset(); });
    getModel().then(function (model) {
      self.model = model;
      for (var l = 0; l < model.L; l++) self.layerSel.appendChild(el("option", { value: String(l), text: String(l + 1) }));
      for (var k = 0; k < model.heads; k++) self.headSel.appendChild(el("option", { value: String(k), text: String(k + 1) }));
      self.layerSel.value = String(model.L - 1);
      [B.generate, B.step, B.reset].forEach(function (b) { b.disabled = false; });
      self.reset();
      root.setAttribute("data-ready", "");
    }, function (err) {
      self.setStatus("모델을 불러오지 못했습니다: " + err.message,
        "Could not load the model: " + err.message);
      root.setAttribute("data-error", "");
    });
  }

  Playground.prototype.setStatus = function (ko, en) {
    this.status.textContent = "";
    this.status.appendChild(t(ko, en));
  };

  Playground.prototype.options = function () {
    var I = this.inputs;
    var T = parseFloat(I.temperature.value), k = parseInt(I.topK.value, 10),
      p = parseFloat(I.topP.value);
    if (!(T > 0)) T = 1;
    return { temperature: T, topK: k >= 1 ? k : null, topP: p > 0 && p <= 1 ? p : null };
  };

  Playground.prototype.reset = function () {
    this.stop();
    this.session = null;
    this.last = null;
    this.promptLen = 0;
    this.tokens.textContent = "";
    this.dist.textContent = "";
    this.attn.textContent = "";
    this.counterBox.textContent = "";
    this.cacheBox.textContent = "";
    this.root.removeAttribute("data-steps");
    if (this.model) {
      this.showPromptTokens();
      this.setStatus("준비됐습니다. 한 단계나 생성을 누르세요.", "Ready: press Step or Generate.");
    }
  };

  Playground.prototype.showPromptTokens = function () {
    var tok = this.model.tokenizer, ids = tok.encode(this.inputs.prompt.value);
    this.tokens.textContent = "";
    for (var i = 0; i < ids.length; i++) this.addToken(ids[i], false);
  };

  Playground.prototype.addToken = function (id, generated) {
    var piece = this.model.tokenizer.piece(id);
    var span = el("span", { cls: "gp-token gp-c" + (this.tokens.children.length % 6) +
      (generated ? " gp-new" : ""), title: "id " + id, "data-id": String(id), text: show(piece) });
    var prev = this.tokens.querySelector(".gp-latest");
    if (prev) prev.classList.remove("gp-latest");
    if (generated) span.classList.add("gp-latest");
    this.tokens.appendChild(span);
  };

  // Feed the prompt through the model, one position at a time, filling the cache.
  Playground.prototype.start = function () {
    var m = this.model, ids = m.tokenizer.encode(this.inputs.prompt.value);
    if (!ids.length) {
      this.setStatus("프롬프트가 비어 있습니다.", "The prompt is empty.");
      return false;
    }
    if (ids.length >= m.maxLen) {
      this.setStatus("프롬프트가 너무 깁니다 (최대 " + (m.maxLen - 1) + "토큰).",
        "The prompt is too long (at most " + (m.maxLen - 1) + " tokens).");
      return false;
    }
    var seed = parseInt(this.inputs.seed.value, 10);
    this.rng = window.D2GPT.mulberry32(isFinite(seed) ? seed : 0);
    this.session = m.session();
    this.showPromptTokens();
    this.cacheBox.textContent = "";
    this.table = this.makeTable();
    for (var i = 0; i < ids.length; i++) {
      this.last = this.session.step(ids[i]);
      this.addCacheRow(i, ids[i], true);
    }
    this.promptLen = ids.length;
    this.stepsDone = 0;
    return true;
  };

  Playground.prototype.step = function () {
    if (!this.model) return false;
    if (!this.session && !this.start()) return false;
    var m = this.model;
    if (this.session.length >= m.maxLen) {
      this.setStatus("문맥이 가득 찼습니다 (" + m.maxLen + "토큰).",
        "The context is full (" + m.maxLen + " tokens).");
      return false;
    }
    var out = this.last, res = window.D2GPT.sample(out.logits, this.options(), this.rng);
    this.drawDistribution(res);
    this.attnContext = this.session.ids.slice();
    this.attnWeights = out.attention;
    this.drawAttention();
    this.addToken(res.id, true);
    this.last = this.session.step(res.id);
    this.addCacheRow(this.session.length - 1, res.id, false);
    this.stepsDone += 1;
    this.root.setAttribute("data-steps", String(this.stepsDone));
    this.counterBox.textContent = "";
    this.counterBox.appendChild(t(
      "이번 단계에 층마다 계산한 키·값 행: 1 · 캐시가 없으면: " + this.last.rowsWithoutCache +
        " (문맥 전체) · 캐시의 행: " + this.session.length,
      "Key/value rows computed this step, per layer: 1 · without the cache: " +
        this.last.rowsWithoutCache + " (the whole context) · rows in the cache: " +
        this.session.length));
    this.setStatus("단계 " + this.stepsDone + ": 후보 " + res.numKept + "개 가운데 '" +
      show(m.tokenizer.piece(res.id)) + "' 토큰을 뽑았습니다.",
      "Step " + this.stepsDone + ": drew '" + show(m.tokenizer.piece(res.id)) + "' (from " +
      res.numKept + " candidates).");
    return true;
  };

  Playground.prototype.generate = function () {
    var self = this, left = parseInt(this.inputs.steps.value, 10) || 30;
    this.stop();
    this.buttons.generate.disabled = true;
    var tick = function () {
      if (left <= 0 || !self.step()) { self.stop(); return; }
      left -= 1;
      self.timer = setTimeout(tick, 15);
    };
    tick();
  };

  Playground.prototype.stop = function () {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.model) this.buttons.generate.disabled = false;
  };

  Playground.prototype.drawDistribution = function (res) {
    var tok = this.model.tokenizer, box = this.dist;
    box.textContent = "";
    // the 10 most probable candidates, the one drawn, and the first 3 the rule removed
    var ranks = [];
    for (var r = 0; r < Math.min(10, res.candidates.length); r++) ranks.push(r);
    if (res.rank >= 10) ranks.push(res.rank);
    for (r = Math.max(10, res.numKept); r < Math.min(res.numKept + 3, res.candidates.length) &&
      r >= 10; r++) if (ranks.indexOf(r) < 0) ranks.push(r);
    ranks.sort(function (a, b) { return a - b; });
    var list = el("ol", { cls: "gp-bars" });
    ranks.forEach(function (rank, i) {
      var c = res.candidates[rank];
      if (i > 0 && rank > ranks[i - 1] + 1) list.appendChild(el("li", { cls: "gp-gap", text: "\u22ef" }));
      var row = el("li", { cls: "gp-bar-row" + (c.kept ? "" : " gp-removed") +
        (c.id === res.id ? " gp-drawn" : ""), "data-id": String(c.id),
        "data-rank": String(rank + 1) });
      row.appendChild(el("span", { cls: "gp-piece", text: (rank + 1) + ". " + show(tok.piece(c.id)) }));
      var track = el("span", { cls: "gp-track" });
      var bar = el("span", { cls: "gp-bar" });
      bar.style.width = (100 * c.before).toFixed(1) + "%";
      track.appendChild(bar);
      row.appendChild(track);
      row.appendChild(el("span", { cls: "gp-p", text: fmt(c.before) }));
      var note = el("span", { cls: "gp-note" });
      if (c.id === res.id) note.appendChild(t("뽑힘", "drawn"));
      else if (!c.kept) note.appendChild(t("제외", "removed"));
      row.appendChild(note);
      list.appendChild(row);
    });
    box.appendChild(list);
    var legend = el("p", { cls: "gp-legend" });
    legend.appendChild(t(
      "막대: 온도를 적용한 확률. 회색은 top-k·top-p가 뺀 후보이고, 남은 " + res.numKept +
        "개에서 하나를 뽑습니다.",
      "Bars: probability after the temperature. Grey candidates were removed by top-k/top-p; " +
        "one token is drawn from the " + res.numKept + " kept."));
    box.appendChild(legend);
  };

  Playground.prototype.drawAttention = function () {
    if (!this.attnWeights) return;
    var l = parseInt(this.layerSel.value, 10) || 0, h = parseInt(this.headSel.value, 10) || 0;
    var w = this.attnWeights[l][h], tok = this.model.tokenizer, box = this.attn;
    box.textContent = "";
    var row = el("div", { cls: "gp-attn-row" });
    for (var j = 0; j < w.length; j++) {
      var a = w[j];
      var cell = el("span", { cls: "gp-attn-cell", "data-weight": a.toFixed(4),
        title: a.toFixed(3) });
      cell.style.background = "rgba(203,24,29," + Math.min(1, a).toFixed(3) + ")";
      if (a > 0.45) cell.style.color = "#fff";
      cell.appendChild(el("span", { cls: "gp-attn-tok", text: show(tok.piece(this.attnContext[j])) }));
      cell.appendChild(el("span", { cls: "gp-attn-val", text: a.toFixed(2) }));
      row.appendChild(cell);
    }
    box.appendChild(row);
    var cap = el("p", { cls: "gp-legend" });
    cap.appendChild(t("마지막 위치의 쿼리가 층 " + (l + 1) + ", 헤드 " + (h + 1) +
      "에서 문맥의 각 토큰에 준 가중치(합 1). 진할수록 큽니다.",
    "Weights the last position's query gives each context token in layer " + (l + 1) +
      ", head " + (h + 1) + " (they sum to 1); darker is larger."));
    box.appendChild(cap);
  };

  Playground.prototype.makeTable = function () {
    var m = this.model, table = el("table", { cls: "gp-cache" });
    var head = el("tr", {}, [el("th", { scope: "col", text: "#" })]);
    var th = el("th", { scope: "col" });
    th.appendChild(t("토큰", "token"));
    head.appendChild(th);
    for (var l = 0; l < m.L; l++) {
      var c = el("th", { scope: "col" });
      c.appendChild(t("층 " + (l + 1) + " k[0..2]", "layer " + (l + 1) + " k[0..2]"));
      head.appendChild(c);
    }
    table.appendChild(el("thead", {}, [head]));
    this.tbody = el("tbody");
    table.appendChild(this.tbody);
    this.cacheBox.appendChild(table);
    return table;
  };

  Playground.prototype.addCacheRow = function (pos, id, fromPrompt) {
    var tr = el("tr", { cls: fromPrompt ? "gp-prompt-row" : "gp-new-row" });
    tr.appendChild(el("td", { text: String(pos) }));
    tr.appendChild(el("td", { cls: "gp-piece", text: show(this.model.tokenizer.piece(id)) }));
    var cache = this.session.cache;
    for (var l = 0; l < cache.length; l++) {
      var k = cache[l].K[pos];
      tr.appendChild(el("td", { cls: "gp-num",
        text: [k[0], k[1], k[2]].map(function (v) { return v.toFixed(2); }).join(" ") }));
    }
    var old = this.tbody.querySelector(".gp-latest-row");
    if (old) old.classList.remove("gp-latest-row");
    if (!fromPrompt) tr.classList.add("gp-latest-row");
    this.tbody.appendChild(tr);
    this.cacheBox.scrollTop = this.cacheBox.scrollHeight;
  };

  function init() {
    var roots = document.querySelectorAll(".gpt-playground");
    for (var i = 0; i < roots.length; i++) window.D2GPTPlayground.push(new Playground(roots[i]));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
