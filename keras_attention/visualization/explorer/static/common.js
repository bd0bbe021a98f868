// Shared by every explorer page: data decoding, the colour map, colour bars, selects.

const DATA = JSON.parse(document.getElementById("explorer-data").textContent);

// {shape, data: base64 little-endian float32} -> {shape, values: Float32Array}.
function decodeArray(encoded) {
  const bytes = Uint8Array.from(atob(encoded.data), (c) => c.charCodeAt(0));
  return { shape: encoded.shape, values: new Float32Array(bytes.buffer) };
}

// Matrix [rows][cols] of a (layers, heads, rows, cols) array; head "mean" averages heads.
function layerHeadMatrix(array, layer, head) {
  const [, heads, rows, cols] = array.shape;
  const used = head === "mean" ? [...Array(heads).keys()] : [head];
  const matrix = [];
  for (let r = 0; r < rows; r++) {
    const row = new Array(cols).fill(0);
    for (const h of used) {
      const offset = ((layer * heads + h) * rows + r) * cols;
      for (let c = 0; c < cols; c++) row[c] += array.values[offset + c] / used.length;
    }
    matrix.push(row);
  }
  return matrix;
}

function valueRange(values) {
  // A loop, not Math.min(...values): spreading a large map overflows the call stack.
  let lo = Infinity, hi = -Infinity;
  for (const value of values) { lo = Math.min(lo, value); hi = Math.max(hi, value); }
  return [lo, hi];
}

// Position of `value` on the colour scale, 0 at lo and 1 at hi (0 for a constant map).
function scaled(value, lo, hi) {
  return hi > lo ? (value - lo) / (hi - lo) : 0;
}

// Viridis, linearly interpolated between the VIRIDIS anchors; t in [0, 1].
function colorAt(t) {
  const x = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(x), VIRIDIS.length - 2);
  const f = x - i;
  const rgb = VIRIDIS[i].map((v, k) => Math.round(v + f * (VIRIDIS[i + 1][k] - v)));
  return `rgb(${rgb.join(",")})`;
}

function formatWeight(value) {
  return Number(value).toPrecision(3);
}

// Labels the colour bar (an element holding .colorbar-ramp, .colorbar-min, .colorbar-max).
function setColorbar(element, lo, hi) {
  const stops = VIRIDIS.map((_, i) => colorAt(i / (VIRIDIS.length - 1)));
  element.querySelector(".colorbar-ramp").style.background =
    `linear-gradient(to right, ${stops.join(",")})`;
  element.dataset.min = lo;
  element.dataset.max = hi;
  element.querySelector(".colorbar-min").textContent = formatWeight(lo);
  element.querySelector(".colorbar-max").textContent = formatWeight(hi);
}

// Replaces a <select>'s options with [value, label] pairs, keeping the choice when possible.
function fillSelect(select, options) {
  const previous = select.value;
  select.replaceChildren(
    ...options.map(([value, label]) => new Option(label, String(value)))
  );
  if (options.some(([value]) => String(value) === previous)) select.value = previous;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
