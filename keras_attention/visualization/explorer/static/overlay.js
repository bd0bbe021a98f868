// A grid of coloured cells laid over an image: the heat map of one (rows, cols) map.
const DISPLAY_SIZE = 384; // px, the longer side of a shown image (small images are enlarged)

function showImage(img, uri, [height, width]) {
  const zoom = DISPLAY_SIZE / Math.max(height, width);
  img.src = uri;
  img.style.width = `${Math.round(width * zoom)}px`;
  img.style.height = `${Math.round(height * zoom)}px`;
}

// Fills `overlay` with one cell per map entry, coloured from lo to hi; returns [lo, hi].
function drawOverlay(overlay, map, onCell) {
  const [lo, hi] = valueRange(map.flat());
  overlay.style.gridTemplateColumns = `repeat(${map[0].length}, 1fr)`;
  overlay.style.gridTemplateRows = `repeat(${map.length}, 1fr)`;
  overlay.replaceChildren(...map.flatMap((row, r) => row.map((weight, c) => {
    const cell = element("div", "patch");
    Object.assign(cell.dataset, { row: r, col: c, weight });
    cell.style.background = colorAt(scaled(weight, lo, hi));
    if (onCell) onCell(cell, r, c, weight);
    return cell;
  })));
  return [lo, hi];
}

// Rows of a flat Float32Array slice as a [rows][cols] array.
function gridOf(values, offset, rows, cols) {
  return [...Array(rows).keys()].map((r) =>
    Array.from(values.subarray(offset + r * cols, offset + (r + 1) * cols)));
}
