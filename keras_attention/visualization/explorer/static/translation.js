// The translation explorer: tokens in two columns joined by weighted lines, or a heat map.
const root = document.getElementById("explorer");
const controls = Object.fromEntries(
  ["example", "kind", "layer", "head", "view"].map((id) => [id, document.getElementById(id)])
);
const examples = DATA.examples.map((example) => ({
  ...example,
  arrays: Object.fromEntries(
    Object.entries(example.attention).map(([kind, encoded]) => [kind, decodeArray(encoded)])
  ),
}));
const ROW_HEIGHT = 26; // px per token in the lines view
let shown = null; // {queries, keys, matrix, lo, hi} of the current choice
let focus = null; // {side: "queries" | "keys", index, pinned}

function updateControls() {
  fillSelect(controls.example, examples.map((example, i) => [i, example.name]));
  const example = examples[Number(controls.example.value)];
  const kinds = DATA.kinds.filter((kind) => kind.key in example.arrays);
  fillSelect(controls.kind, kinds.map((kind) => [kind.key, kind.label]));
  const [layers, heads] = example.arrays[controls.kind.value].shape;
  fillSelect(controls.layer, [...Array(layers).keys()].map((l) => [l, `layer ${l}`]));
  fillSelect(controls.head, [["mean", "mean of heads"],
    ...[...Array(heads).keys()].map((h) => [h, `head ${h}`])]);
}

function build() {
  updateControls();
  const example = examples[Number(controls.example.value)];
  const kind = DATA.kinds.find((k) => k.key === controls.kind.value);
  const head = controls.head.value === "mean" ? "mean" : Number(controls.head.value);
  const matrix = layerHeadMatrix(example.arrays[kind.key], Number(controls.layer.value), head);
  const [lo, hi] = valueRange(matrix.flat());
  shown = { queries: example[kind.query], keys: example[kind.keys], matrix, lo, hi };
  Object.assign(root.dataset, {
    example: controls.example.value, kind: kind.key, layer: controls.layer.value,
    head: String(head), view: controls.view.value,
  });
  setColorbar(root.querySelector(".colorbar"), lo, hi);
  const lines = controls.view.value === "lines";
  document.getElementById("lines").hidden = !lines;
  document.getElementById("matrix").hidden = lines;
  if (lines) buildLines(); else buildMatrix();
  highlight();
}

function token(text, side, index) {
  const node = element("span", "token", text);
  Object.assign(node.dataset, { side, index });
  node.addEventListener("mouseenter", () => { if (!focus?.pinned) setFocus(side, index, false); });
  node.addEventListener("mouseleave", () => { if (!focus?.pinned) setFocus(null); });
  node.addEventListener("click", () => {
    const same = focus?.pinned && focus.side === side && focus.index === index;
    setFocus(same ? null : side, index, !same);
  });
  return node;
}

function buildLines() {
  const { queries, keys, matrix, hi } = shown;
  for (const [side, words] of [["queries", queries], ["keys", keys]]) {
    root.querySelector(`.column[data-side=${side}]`)
      .replaceChildren(...words.map((word, i) => token(word, side, i)));
  }
  const svg = root.querySelector(".links");
  const width = Number(svg.getAttribute("width"));
  svg.setAttribute("height", ROW_HEIGHT * Math.max(queries.length, keys.length));
  svg.replaceChildren();
  matrix.forEach((row, q) => row.forEach((weight, k) => {
    const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
    const attributes = {
      x1: 0, y1: ROW_HEIGHT * (q + 0.5), x2: width, y2: ROW_HEIGHT * (k + 0.5),
      "stroke-opacity": hi > 0 ? weight / hi : 0, "data-query": q, "data-key": k,
      "data-weight": weight,
    };
    for (const [name, value] of Object.entries(attributes)) line.setAttribute(name, value);
    svg.appendChild(line);
  }));
}

function buildMatrix() {
  const { queries, keys, matrix, lo, hi } = shown;
  const table = document.getElementById("matrix");
  const header = element("tr");
  header.append(element("th"), ...keys.map((word, k) => {
    const cell = element("th", "key-label");
    cell.append(token(word, "keys", k));
    return cell;
  }));
  const rows = matrix.map((row, q) => {
    const tr = element("tr");
    const label = element("th");
    label.append(token(queries[q], "queries", q));
    tr.append(label, ...row.map((weight, k) => {
      const cell = element("td", "cell");
      Object.assign(cell.dataset, { query: q, key: k, weight });
      cell.style.background = colorAt(scaled(weight, lo, hi));
      cell.title = formatWeight(weight);
      cell.addEventListener("mouseenter", () => showValue(q, k));
      return cell;
    }));
    return tr;
  });
  table.replaceChildren(header, ...rows);
}

function showValue(q, k) {
  const readout = document.getElementById("readout");
  const weight = shown.matrix[q][k];
  readout.textContent = `${shown.queries[q]} \u2192 ${shown.keys[k]}: ${formatWeight(weight)}`;
  readout.dataset.weight = weight;
}

function setFocus(side, index, pinned) {
  focus = side === null ? null : { side, index, pinned };
  highlight();
}

// Marks the focused token and weighs the tokens on the other side; shows only its lines.
function highlight() {
  const { matrix, hi } = shown;
  root.dataset.focus = focus ? `${focus.side}:${focus.index}` : "";
  for (const node of root.querySelectorAll(".token")) {
    const index = Number(node.dataset.index);
    node.classList.toggle("focused", !!focus && focus.side === node.dataset.side &&
      focus.index === index);
    if (!focus || focus.side === node.dataset.side) {
      delete node.dataset.weight;
      node.style.background = "";
      continue;
    }
    const weight = focus.side === "queries" ? matrix[focus.index][index] : matrix[index][focus.index];
    node.dataset.weight = weight;
    node.style.background = `rgba(255, 140, 0, ${hi > 0 ? weight / hi : 0})`;
  }
  for (const cell of root.querySelectorAll("#matrix td.cell")) {
    const index = focus && Number(cell.dataset[focus.side === "queries" ? "query" : "key"]);
    cell.classList.toggle("focused", !!focus && index === focus.index);
  }
  for (const line of root.querySelectorAll(".links line")) {
    const mine = !focus || Number(line.dataset[focus.side === "queries" ? "query" : "key"]) ===
      focus.index;
    line.style.display = mine ? "" : "none";
  }
}

for (const [name, select] of Object.entries(controls)) {
  select.addEventListener("change", () => {
    if (name === "example" || name === "kind") focus = null;
    build();
  });
}
build();
