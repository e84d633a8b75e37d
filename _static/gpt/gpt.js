/* The book's GPT in the browser: chapter 10's BPE tokenizer and d2l.GPT's forward pass with a
 * key-value cache, in plain JavaScript (no dependencies, no build step).
 *
 * Files: model.json (config, tokenizer, tensor table) and weights.bin (float32 little-endian,
 * the tensors one after another in the order of model.json's "tensors"), both written by
 * d2lite.shipped.save_gpt (python -m tools.train_lm).
 *
 * Usage:
 *   const model = await D2GPT.load("_static/gpt/");
 *   const ids = model.tokenizer.encode("트랜스포머는");
 *   const run = model.session();             // an empty cache
 *   let out; for (const id of ids) out = run.step(id);
 *   const pick = D2GPT.sample(out.logits, {temperature: 0.8, topK: 40, topP: 0.9},
 *                             D2GPT.mulberry32(1));
 *
 * Arithmetic is in float64 on float32 weights; PyTorch computes in float32, and the logits
 * agree within 1e-4 (tests/test_playground.py).
 */
(function (root) {
  "use strict";

  /* ---------------- tokenizer (d2lite.lm.BPETokenizer) ---------------- */

  // Python's str.isspace() characters (what re's \s matches in a str pattern).
  const WS = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029" +
    "\\u202f\\u205f\\u3000";
  // Pre-tokenization: an optional space and a run of non-spaces, or a run of spaces.
  const CHUNK = new RegExp("[" + WS + "]?[^" + WS + "]+|[" + WS + "]+", "gu");
  const L0 = 0x1100, V0 = 0x1161, T0 = 0x11a7;

  function splitJamo(ch) {
    const c = ch.codePointAt(0);
    if (c < 0xac00 || c > 0xd7a3) return [ch];
    const i = c - 0xac00, fin = i % 28;
    const out = [String.fromCharCode(L0 + Math.floor(i / 588)),
      String.fromCharCode(V0 + Math.floor((i % 588) / 28))];
    if (fin) out.push(String.fromCharCode(T0 + fin));
    return out;
  }

  function joinJamo(text) {
    const cs = Array.from(text), out = [];
    let i = 0;
    while (i < cs.length) {
      const a = cs[i].codePointAt(0) - L0;
      const b = i + 1 < cs.length ? cs[i + 1].codePointAt(0) - V0 : -1;
      if (a >= 0 && a < 19 && b >= 0 && b < 21) {
        const c = i + 2 < cs.length ? cs[i + 2].codePointAt(0) - T0 : 0;
        const fin = c > 0 && c < 28 ? c : 0;
        out.push(String.fromCharCode(0xac00 + (a * 21 + b) * 28 + fin));
        i += fin ? 3 : 2;
      } else {
        out.push(cs[i]);
        i += 1;
      }
    }
    return out.join("");
  }

  // UTF-8 of one code point; a lone surrogate gets its 3 bytes (Python's surrogatepass).
  function utf8(cp, out) {
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63),
      0x80 | (cp & 63));
    return out;
  }

  // Strict UTF-8 decoding that lets encoded surrogates through (surrogatepass); null if invalid.
  function decodeStrict(bytes) {
    let s = "", i = 0;
    while (i < bytes.length) {
      const b = bytes[i];
      let cp, n;
      if (b < 0x80) { cp = b; n = 0; } else if (b >= 0xc2 && b < 0xe0) { cp = b & 31; n = 1; } else if (b >= 0xe0 && b < 0xf0) { cp = b & 15; n = 2; } else if (b >= 0xf0 && b < 0xf5) { cp = b & 7; n = 3; } else return null;
      for (let k = 1; k <= n; k++) {
        const c = bytes[i + k];
        if (c === undefined || (c & 0xc0) !== 0x80) return null;
        cp = (cp << 6) | (c & 63);
      }
      if ((n === 2 && cp < 0x800) || (n === 3 && (cp < 0x10000 || cp > 0x10ffff))) return null;
      s += String.fromCodePoint(cp);
      i += n + 1;
    }
    return s;
  }

  function decodeBytes(bytes) {
    const s = decodeStrict(bytes);
    if (s !== null) return s;
    return new TextDecoder("utf-8").decode(new Uint8Array(bytes));
  }

  class Tokenizer {
    constructor(spec) {
      this.unit = spec.unit;
      this.alphabet = spec.alphabet.slice();
      this.merges = spec.merges.map((m) => [m[0], m[1]]);
      this.symbolId = new Map(this.alphabet.map((s, i) => [s, 256 + i]));
      this.parts = [];
      for (let i = 0; i < 256 + this.alphabet.length; i++) this.parts.push([i]);
      this.rank = new Map();
      this.merges.forEach(([a, b], k) => {
        this.parts.push(this.parts[a].concat(this.parts[b]));
        this.rank.set(a * 65536 + b, k);
      });
      this.firstMerged = 256 + this.alphabet.length;
      this.cache = new Map();
    }

    get size() { return this.parts.length; }

    symbols(ch) {
      if (this.unit === "jamo") {
        const c = ch.codePointAt(0);
        return c >= 0x1100 && c <= 0x11ff ? null : splitJamo(ch);
      }
      return [ch];
    }

    baseIds(chunk) {
      const ids = [];
      for (const ch of chunk) {
        if (this.unit === "byte") { utf8(ch.codePointAt(0), ids); continue; }
        const syms = this.symbols(ch);
        if (syms !== null && syms.every((s) => this.symbolId.has(s))) {
          for (const s of syms) ids.push(this.symbolId.get(s));
        } else utf8(ch.codePointAt(0), ids);
      }
      return ids;
    }

    encodeChunk(chunk) {
      const hit = this.cache.get(chunk);
      if (hit) return hit;
      let ids = this.baseIds(chunk);
      while (ids.length > 1) {
        let best = Infinity, pa = -1, pb = -1;
        for (let i = 0; i + 1 < ids.length; i++) {
          const r = this.rank.get(ids[i] * 65536 + ids[i + 1]);
          if (r !== undefined && r < best) { best = r; pa = ids[i]; pb = ids[i + 1]; }
        }
        if (best === Infinity) break;
        const out = [], fresh = this.firstMerged + best;
        for (let i = 0; i < ids.length;) {
          if (i + 1 < ids.length && ids[i] === pa && ids[i + 1] === pb) { out.push(fresh); i += 2; } else { out.push(ids[i]); i += 1; }
        }
        ids = out;
      }
      if (this.cache.size > 100000) this.cache.clear();
      this.cache.set(chunk, ids);
      return ids;
    }

    encode(text) {
      if (typeof text !== "string") throw new TypeError("encode expects a string");
      const out = [];
      for (const c of chunks(text)) for (const i of this.encodeChunk(c)) out.push(i);
      return out;
    }

    decode(ids) {
      const runs = [];
      for (const i of ids) {
        if (!Number.isInteger(i) || i < 0 || i >= this.size) {
          throw new RangeError("token ids must be ints in [0, " + this.size + "), got " + i);
        }
        for (const b of this.parts[i]) {
          const isByte = b < 256;
          if (!runs.length || runs[runs.length - 1][0] !== isByte) runs.push([isByte, []]);
          runs[runs.length - 1][1].push(b);
        }
      }
      let out = "";
      for (const [isByte, bases] of runs) {
        if (isByte) out += decodeBytes(bases);
        else {
          const text = bases.map((b) => this.alphabet[b - 256]).join("");
          out += this.unit === "jamo" ? joinJamo(text) : text;
        }
      }
      return out;
    }

    // One token as the text it stands for; part of a character's bytes shows as <0xNN>.
    piece(id) {
      const p = this.decode([id]);
      if (!p.includes("\ufffd")) return p;
      return this.parts[id].map((b) => (b < 256
        ? "<0x" + b.toString(16).toUpperCase().padStart(2, "0") + ">"
        : this.alphabet[b - 256])).join("");
    }

    pieces(text) { return this.encode(text).map((i) => this.piece(i)); }
  }

  /* ---------------- the model (d2lite.lm.GPT) ---------------- */

  function layerNorm(x, w, b, eps) {
    const n = x.length;
    let mean = 0;
    for (let i = 0; i < n; i++) mean += x[i];
    mean /= n;
    let v = 0;
    for (let i = 0; i < n; i++) { const d = x[i] - mean; v += d * d; }
    const inv = 1 / Math.sqrt(v / n + eps);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = (x[i] - mean) * inv * w[i] + b[i];
    return out;
  }

  // y = W x + b for W (out, in) stored row-major, as torch's nn.Linear keeps it.
  function linear(W, b, x, nOut) {
    const nIn = x.length, y = new Float64Array(nOut);
    for (let o = 0; o < nOut; o++) {
      let s = b ? b[o] : 0;
      const row = o * nIn;
      for (let i = 0; i < nIn; i++) s += W[row + i] * x[i];
      y[o] = s;
    }
    return y;
  }

  function softmaxInPlace(a) {
    let m = -Infinity;
    for (let i = 0; i < a.length; i++) if (a[i] > m) m = a[i];
    let s = 0;
    for (let i = 0; i < a.length; i++) { a[i] = Math.exp(a[i] - m); s += a[i]; }
    for (let i = 0; i < a.length; i++) a[i] /= s;
    return a;
  }

  class Model {
    constructor(meta, buffer) {
      this.meta = meta;
      this.config = meta.config;
      this.tokenizer = new Tokenizer(meta.tokenizer);
      const data = new Float32Array(buffer);
      if (data.length !== meta.num_floats) {
        throw new Error("weights.bin holds " + data.length + " floats, model.json says " +
          meta.num_floats);
      }
      this.t = {};
      for (const e of meta.tensors) {
        const n = e.shape.reduce((a, b) => a * b, 1);
        this.t[e.name] = data.subarray(e.offset, e.offset + n);
      }
      const c = this.config;
      this.d = c.num_hiddens; this.heads = c.num_heads; this.dh = c.num_hiddens / c.num_heads;
      this.V = c.vocab_size; this.L = c.num_blks; this.maxLen = c.max_len;
      this.eps = c.layer_norm_eps;
      this.blocks = [];
      for (let l = 0; l < this.L; l++) {
        const p = (k) => this.t["blks." + l + "." + k];
        this.blocks.push({
          ln1w: p("ln1.weight"), ln1b: p("ln1.bias"), ln2w: p("ln2.weight"), ln2b: p("ln2.bias"),
          Wq: p("attention.W_q.weight"), bq: p("attention.W_q.bias"),
          Wk: p("attention.W_k.weight"), bk: p("attention.W_k.bias"),
          Wv: p("attention.W_v.weight"), bv: p("attention.W_v.bias"),
          Wo: p("attention.W_o.weight"), bo: p("attention.W_o.bias"),
          W1: p("ffn.dense1.weight"), b1: p("ffn.dense1.bias"),
          W2: p("ffn.dense2.weight"), b2: p("ffn.dense2.bias"),
        });
      }
    }

    numParams() {
      return this.meta.tensors.reduce((s, e) => s + e.shape.reduce((a, b) => a * b, 1), 0);
    }

    embed(id, pos) {
      if (!Number.isInteger(id) || id < 0 || id >= this.V) {
        throw new RangeError("token id must be an int in [0, " + this.V + "), got " + id);
      }
      if (pos >= this.maxLen) {
        throw new RangeError("position " + pos + " exceeds max_len " + this.maxLen);
      }
      const d = this.d, x = new Float64Array(d), E = this.t["embedding.weight"];
      const P = this.t["pos_embedding.weight"];
      for (let i = 0; i < d; i++) x[i] = E[id * d + i] + P[pos * d + i];
      return x;
    }

    ffn(blk, x) {
      const h = layerNorm(x, blk.ln2w, blk.ln2b, this.eps);
      const f = linear(blk.W1, blk.b1, h, 4 * this.d);
      for (let i = 0; i < f.length; i++) if (f[i] < 0) f[i] = 0;
      const y = linear(blk.W2, blk.b2, f, this.d);
      for (let i = 0; i < this.d; i++) x[i] += y[i];
    }

    head(x) {
      const h = layerNorm(x, this.t["ln.weight"], this.t["ln.bias"], this.eps);
      return linear(this.t["embedding.weight"], null, h, this.V); // tied with the embedding
    }

    // attention of one query (d) over keys/values rows -> (output d, weights per head)
    attend(q, K, V) {
      const { heads, dh, d } = this, n = K.length, scale = 1 / Math.sqrt(dh);
      const out = new Float64Array(d), weights = [];
      for (let h = 0; h < heads; h++) {
        const a = new Float64Array(n), o = h * dh;
        for (let j = 0; j < n; j++) {
          let s = 0;
          for (let i = 0; i < dh; i++) s += q[o + i] * K[j][o + i];
          a[j] = s * scale;
        }
        softmaxInPlace(a);
        for (let j = 0; j < n; j++) for (let i = 0; i < dh; i++) out[o + i] += a[j] * V[j][o + i];
        weights.push(a);
      }
      return { out, weights };
    }

    session() { return new Session(this); }

    /* The cacheless forward pass: every position of ids projected again, as a model without a
     * cache computes each step. Returns the logits of every position. */
    forwardFull(ids) {
      const d = this.d;
      let X = ids.map((id, pos) => this.embed(id, pos));
      for (const blk of this.blocks) {
        const H = X.map((x) => layerNorm(x, blk.ln1w, blk.ln1b, this.eps));
        const Q = H.map((h) => linear(blk.Wq, blk.bq, h, d));
        const K = H.map((h) => linear(blk.Wk, blk.bk, h, d));
        const V = H.map((h) => linear(blk.Wv, blk.bv, h, d));
        X = X.map((x, t) => {
          const { out } = this.attend(Q[t], K.slice(0, t + 1), V.slice(0, t + 1));
          const y = linear(blk.Wo, blk.bo, out, d);
          const z = new Float64Array(d);
          for (let i = 0; i < d; i++) z[i] = x[i] + y[i];
          this.ffn(blk, z);
          return z;
        });
      }
      return X.map((x) => this.head(x));
    }
  }

  /* One generation: the cache holds, per block, one row of keys and one of values (all heads
   * side by side, d numbers each) per position seen so far. step(id) projects only the new
   * token and appends its row. */
  class Session {
    constructor(model) {
      this.model = model;
      this.ids = [];
      this.cache = model.blocks.map(() => ({ K: [], V: [] }));
    }

    get length() { return this.ids.length; }

    step(id) {
      const m = this.model, d = m.d, pos = this.ids.length;
      const x = m.embed(id, pos);
      const attention = [];
      for (let l = 0; l < m.L; l++) {
        const blk = m.blocks[l], c = this.cache[l];
        const h = layerNorm(x, blk.ln1w, blk.ln1b, m.eps);
        const q = linear(blk.Wq, blk.bq, h, d);
        c.K.push(linear(blk.Wk, blk.bk, h, d)); // one new row per block
        c.V.push(linear(blk.Wv, blk.bv, h, d));
        const { out, weights } = m.attend(q, c.K, c.V);
        attention.push(weights);
        const y = linear(blk.Wo, blk.bo, out, d);
        for (let i = 0; i < d; i++) x[i] += y[i];
        m.ffn(blk, x);
      }
      this.ids.push(id);
      return {
        logits: m.head(x),
        attention, // [block][head] -> weights over the positions 0..pos
        rowsComputed: 1, // keys and values projected this step, per block
        rowsWithoutCache: pos + 1, // what a cacheless model projects again
        position: pos,
      };
    }
  }

  /* ---------------- sampling (d2lite.lm.sample_next_token) ---------------- */

  // A small seeded generator: mulberry32 -> floats in [0, 1).
  function mulberry32(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  /* Temperature, then top-k, then top-p over the sorted scores (ties in id order), then one
   * draw with rng (a function giving [0, 1)); greedy: {topK: 1}. Returns the id drawn and the
   * candidates in sorted order: probability before the rule (softmax(logits / T)), after it
   * (renormalized over the kept ones; 0 if removed), whether kept. */
  function sample(logits, opts, rng) {
    const T = opts && opts.temperature !== undefined ? opts.temperature : 1;
    const topK = opts && opts.topK ? opts.topK : null;
    const topP = opts && opts.topP !== undefined && opts.topP !== null ? opts.topP : null;
    if (!(T > 0)) throw new RangeError("temperature must be > 0, got " + T);
    if (topK !== null && !(Number.isInteger(topK) && topK >= 1)) {
      throw new RangeError("topK must be an int >= 1, got " + topK);
    }
    if (topP !== null && !(topP > 0 && topP <= 1)) {
      throw new RangeError("topP must be in (0, 1], got " + topP);
    }
    const n = logits.length;
    const order = Array.from({ length: n }, (_, i) => i);
    order.sort((a, b) => (logits[b] - logits[a]) || (a - b)); // stable: ties by id
    const scores = order.map((i) => logits[i] / T);
    const before = softmaxInPlace(Float64Array.from(scores));
    let keep = order.map((_, r) => topK === null || r < topK);
    const renorm = () => {
      const s = scores.map((z, r) => (keep[r] ? z : -Infinity));
      return softmaxInPlace(Float64Array.from(s));
    };
    let after = renorm();
    if (topP !== null) {
      let mass = 0;
      keep = keep.map((k, r) => { const ok = k && mass < topP; mass += after[r]; return ok; });
      after = renorm();
    }
    const u = rng ? rng() : 0;
    let pick = 0;
    if (rng) {
      let acc = 0;
      pick = -1;
      for (let r = 0; r < n; r++) {
        if (!keep[r]) continue;
        acc += after[r];
        if (u < acc) { pick = r; break; }
      }
      if (pick < 0) pick = keep.lastIndexOf(true); // rounding left u above the total
    }
    const candidates = order.map((id, r) => ({ id, before: before[r], after: after[r], kept: keep[r] }));
    return { id: order[pick], rank: pick, candidates, numKept: keep.filter(Boolean).length };
  }

  function argmax(a) {
    let best = 0;
    for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i;
    return best;
  }

  async function load(base) {
    const url = (f) => (base.endsWith("/") ? base : base + "/") + f;
    const [metaResp, binResp] = await Promise.all([fetch(url("model.json")), fetch(url("weights.bin"))]);
    if (!metaResp.ok || !binResp.ok) throw new Error("could not load the model from " + base);
    return new Model(await metaResp.json(), await binResp.arrayBuffer());
  }

  function chunks(text) { return Array.from(text.matchAll(CHUNK), (m) => m[0]); }

  const api = { load, chunks, Model, Session, Tokenizer, sample, mulberry32, argmax, splitJamo, joinJamo };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.D2GPT = api;
})(typeof self !== "undefined" ? self : this);
