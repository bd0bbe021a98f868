// The caption explorer: one word's attention map over the image.
const root = document.getElementById("explorer");
const picker = document.getElementById("example");
const overlay = document.getElementById("overlay");
const opacity = document.getElementById("opacity");
const examples = DATA.examples.map((example) => ({
  ...example, maps: decodeArray(example.attention),
}));
let selected = 0; // index of the clicked (or stepped to) word
let hovered = null; // index of the word under the cursor, if any

function buildExample() {
  const example = examples[Number(picker.value)];
  root.dataset.example = picker.value;
  showImage(document.getElementById("image"), example.image,
    example.size);
  document.getElementById("words").replaceChildren(...example.words.map((word, i) => {
    const node = element("span", "token", word);
    node.dataset.index = i;
    node.addEventListener("mouseenter", () => { hovered = i; showWord(); });
    node.addEventListener("mouseleave", () => { hovered = null; showWord(); });
    node.addEventListener("click", () => { selected = i; showWord(); });
    return node;
  }));
  showWord();
}

function showWord() {
  const example = examples[Number(picker.value)];
  const word = hovered ?? selected;
  const [, rows, cols] = example.maps.shape;
  const map = gridOf(example.maps.values, word * rows * cols, rows, cols);
  root.dataset.word = word;
  for (const node of document.querySelectorAll("#words .token")) {
    node.classList.toggle("current", Number(node.dataset.index) === word);
  }
  const [lo, hi] = drawOverlay(overlay, map, (cell, r, c, weight) => {
    cell.title = formatWeight(weight);
    cell.addEventListener("mouseenter", () => {
      const readout = document.getElementById("readout");
      readout.textContent = `${example.words[word]} at (${r}, ${c}): ${formatWeight(weight)}`;
      readout.dataset.weight = weight;
    });
  });
  setColorbar(root.querySelector(".colorbar"), lo, hi);
}

function step(by) {
  const count = examples[Number(picker.value)].words.length;
  selected = Math.min(Math.max(selected + by, 0), count - 1);
  hovered = null;
  showWord();
}

fillSelect(picker, examples.map((example, i) => [i, example.name]));
picker.addEventListener("change", () => { selected = 0; hovered = null; buildExample(); });
document.getElementById("previous").addEventListener("click", () => step(-1));
document.getElementById("next").addEventListener("click", () => step(1));
document.addEventListener("keydown", (event) => {
  if (event.target.matches("select, input")) return; // arrows there change the control
  if (event.key === "ArrowLeft") step(-1);
  if (event.key === "ArrowRight") step(1);
});
opacity.addEventListener("input", () => { overlay.style.opacity = opacity.value; });
overlay.style.opacity = opacity.value;
buildExample();
