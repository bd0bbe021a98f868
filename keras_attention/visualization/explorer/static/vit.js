// The Vision Transformer explorer: a row of the rollout or of one layer's attention, per patch.
const root = document.getElementById("explorer");
const controls = Object.fromEntries(
  ["example", "layer", "head"].map((id) => [id, document.getElementById(id)])
);
const overlay = document.getElementById("overlay");
const opacity = document.getElementById("opacity");
const examples = DATA.examples.map((example) => ({
  ...example,
  maps: decodeArray(example.attention),
  rolled: decodeArray(example.rollout),
}));
let query = null; // token whose row is shown; null: the class token, or the mean of all rows

function buildExample() {
  const example = examples[Number(controls.example.value)];
  const [layers, heads] = example.maps.shape;
  fillSelect(controls.layer, [["rollout", "attention rollout"],
    ...[...Array(layers).keys()].map((l) => [l, `layer ${l}`])]);
  fillSelect(controls.head, [["mean", "mean of heads"],
    ...[...Array(heads).keys()].map((h) => [h, `head ${h}`])]);
  const probability = example.probability === null ? "" :
    ` (probability ${formatWeight(example.probability)})`;
  document.getElementById("prediction").textContent = `label: ${example.label}${probability}`;
  document.getElementById("reset").textContent =
    example.classToken ? "back to the class token" : "back to the mean of all tokens";
  showImage(document.getElementById("image"), example.image, example.size);
  showMap();
}

// The shown token-to-token matrix, [N][N].
function currentMatrix(example) {
  if (controls.layer.value === "rollout") {
    const n = example.rolled.shape[0];
    return gridOf(example.rolled.values, 0, n, n);
  }
  const head = controls.head.value === "mean" ? "mean" : Number(controls.head.value);
  return layerHeadMatrix(example.maps, Number(controls.layer.value), head);
}

function showMap() {
  const example = examples[Number(controls.example.value)];
  const [rows, cols] = example.grid;
  const first = example.classToken ? 1 : 0; // index of the first patch token
  const matrix = currentMatrix(example);
  const row = query !== null ? matrix[query] :
    example.classToken ? matrix[0] : matrix[0].map((_, k) => matrix.reduce(
      (sum, r) => sum + r[k], 0) / matrix.length);
  const patches = row.slice(first);
  const map = [...Array(rows).keys()].map((r) => patches.slice(r * cols, (r + 1) * cols));
  controls.head.disabled = controls.layer.value === "rollout";
  Object.assign(root.dataset, {
    example: controls.example.value, layer: controls.layer.value, head: controls.head.value,
    query: query !== null ? query : example.classToken ? 0 : "mean",
  });
  const [lo, hi] = drawOverlay(overlay, map, (cell, r, c, weight) => {
    const token = first + r * cols + c;
    cell.classList.toggle("selected", token === query);
    cell.title = formatWeight(weight);
    cell.addEventListener("click", () => { query = token === query ? null : token; showMap(); });
    cell.addEventListener("mouseenter", () => {
      const readout = document.getElementById("readout");
      readout.textContent = `patch (${r}, ${c}): ${formatWeight(weight)}`;
      readout.dataset.weight = weight;
    });
  });
  setColorbar(root.querySelector(".colorbar"), lo, hi);
}

fillSelect(controls.example, examples.map((example, i) => [i, example.name]));
controls.example.addEventListener("change", () => { query = null; buildExample(); });
controls.layer.addEventListener("change", showMap);
controls.head.addEventListener("change", showMap);
document.getElementById("reset").addEventListener("click", () => { query = null; showMap(); });
opacity.addEventListener("input", () => { overlay.style.opacity = opacity.value; });
overlay.style.opacity = opacity.value;
buildExample();
