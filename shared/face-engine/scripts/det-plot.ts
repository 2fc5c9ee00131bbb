/** DET plots (error against error, both axes logarithmic) as an SVG string, rendered to PNG by sharp. */

export interface CurvePoint {
  readonly x: number;
  readonly y: number;
  /** Drawn dashed from the previous point (a value beyond the data). */
  readonly dashed?: boolean;
}

export interface Curve {
  readonly name: string;
  /** Index into the palette. */
  readonly colour: number;
  readonly points: readonly CurvePoint[];
  readonly markers: ReadonlyArray<{ readonly x: number; readonly y: number; readonly label: string }>;
}

export interface Panel {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly xRange: readonly [number, number];
  readonly yRange: readonly [number, number];
  readonly curves: readonly Curve[];
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf'];
const PANEL_W = 680;
const PANEL_H = 600;
const PAD = { left: 90, right: 20, top: 50, bottom: 70 };
const HEADER = 50;
const FOOTER = 36;

const escape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function decadeLabel(exponent: number): string {
  return exponent >= -2 ? String(10 ** exponent) : `1e${exponent}`;
}

function panelSvg(panel: Panel, offsetX: number, id: number): string {
  const w = PANEL_W - PAD.left - PAD.right;
  const h = PANEL_H - PAD.top - PAD.bottom;
  const x0 = offsetX + PAD.left;
  const y0 = HEADER + PAD.top;
  const [xMin, xMax] = panel.xRange.map(Math.log10) as [number, number];
  const [yMin, yMax] = panel.yRange.map(Math.log10) as [number, number];
  // A rate of 0 has no logarithm: it is drawn on the axis.
  const px = (v: number): number =>
    x0 + ((Math.log10(Math.max(v, panel.xRange[0])) - xMin) / (xMax - xMin)) * w;
  const py = (v: number): number =>
    y0 + h - ((Math.log10(Math.max(v, panel.yRange[0])) - yMin) / (yMax - yMin)) * h;
  const out: string[] = [];
  out.push(`<clipPath id="c${id}"><rect x="${x0}" y="${y0}" width="${w}" height="${h}"/></clipPath>`);
  out.push(`<rect x="${x0}" y="${y0}" width="${w}" height="${h}" fill="white" stroke="#333"/>`);
  for (let e = Math.ceil(xMin); e <= xMax; e++) {
    const x = px(10 ** e);
    out.push(`<line x1="${x}" y1="${y0}" x2="${x}" y2="${y0 + h}" stroke="#ddd"/>`);
    out.push(
      `<text x="${x}" y="${y0 + h + 20}" text-anchor="middle" font-size="14">${decadeLabel(e)}</text>`,
    );
  }
  for (let e = Math.ceil(yMin); e <= yMax; e++) {
    const y = py(10 ** e);
    out.push(`<line x1="${x0}" y1="${y}" x2="${x0 + w}" y2="${y}" stroke="#ddd"/>`);
    out.push(`<text x="${x0 - 8}" y="${y + 5}" text-anchor="end" font-size="14">${decadeLabel(e)}</text>`);
  }
  out.push(
    `<text x="${x0 + w / 2}" y="${y0 - 16}" text-anchor="middle" font-size="18" font-weight="bold">${escape(panel.title)}</text>`,
  );
  out.push(
    `<text x="${x0 + w / 2}" y="${y0 + h + 48}" text-anchor="middle" font-size="15">${escape(panel.xLabel)}</text>`,
  );
  out.push(
    `<text transform="translate(${offsetX + 22} ${y0 + h / 2}) rotate(-90)" text-anchor="middle" font-size="15">${escape(panel.yLabel)}</text>`,
  );
  const lines: string[] = [];
  const labelled: Array<{ x: number; y: number }> = [];
  // Earlier curves are drawn wider, so a later curve lying on one leaves it visible on both sides.
  panel.curves.forEach((curve, index) => {
    const colour = PALETTE[curve.colour % PALETTE.length]!;
    const width = 2 + (2.5 * (panel.curves.length - 1 - index)) / Math.max(1, panel.curves.length - 1);
    // One polyline per run of solid or dashed segments, so that the dash pattern flows along it.
    let run: string[] = [];
    let dashed = false;
    const flush = (): void => {
      if (run.length > 1) {
        lines.push(
          `<polyline points="${run.join(' ')}" fill="none" stroke="${colour}" stroke-width="${width.toFixed(1)}" stroke-linejoin="round"${dashed ? ' stroke-dasharray="8 5"' : ''}/>`,
        );
      }
    };
    curve.points.forEach((point, i) => {
      const xy = `${px(point.x).toFixed(1)},${py(point.y).toFixed(1)}`;
      if (i > 0 && Boolean(point.dashed) !== dashed) {
        flush();
        run = [run[run.length - 1]!];
      }
      if (i > 0) dashed = Boolean(point.dashed);
      run.push(xy);
    });
    flush();
    for (const m of curve.markers) {
      const x = px(m.x);
      const y = py(m.y);
      // One label for points drawn on the same spot (strategies with the same threshold).
      const crowded = labelled.some((p) => Math.hypot(p.x - x, p.y - y) < 14);
      labelled.push({ x, y });
      // Labels of points near the right edge go on their left.
      const left = x > x0 + w - 60;
      lines.push(`<circle cx="${x}" cy="${y}" r="6" fill="${colour}" stroke="black"/>`);
      if (!crowded)
        lines.push(
          `<text x="${left ? x - 9 : x + 9}" y="${y - 8}" font-size="13" fill="${colour}"${left ? ' text-anchor="end"' : ''}>${escape(m.label)}</text>`,
        );
    }
  });
  out.push(`<g clip-path="url(#c${id})">${lines.join('')}</g>`);
  // Legend in the top right corner, where DET curves do not go (both error rates high).
  const legendW = 330;
  const lx = x0 + w - legendW - 10;
  const ly = y0 + 10;
  out.push(
    `<rect x="${lx}" y="${ly}" width="${legendW}" height="${panel.curves.length * 22 + 12}" fill="white" stroke="#999"/>`,
  );
  panel.curves.forEach((curve, i) => {
    const colour = PALETTE[curve.colour % PALETTE.length]!;
    const y = ly + 20 + i * 22;
    out.push(
      `<line x1="${lx + 10}" y1="${y - 5}" x2="${lx + 40}" y2="${y - 5}" stroke="${colour}" stroke-width="3"/>`,
    );
    out.push(`<text x="${lx + 48}" y="${y}" font-size="14">${escape(curve.name)}</text>`);
  });
  return out.join('\n');
}

export function detSvg(plot: { title: string; panels: readonly Panel[]; note: string }): string {
  const width = PANEL_W * plot.panels.length;
  const height = HEADER + PANEL_H + FOOTER;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans, sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="32" text-anchor="middle" font-size="22" font-weight="bold">${escape(plot.title)}</text>`,
    ...plot.panels.map((p, i) => panelSvg(p, i * PANEL_W, i)),
    `<text x="${width / 2}" y="${height - 14}" text-anchor="middle" font-size="14" fill="#444">${escape(plot.note)}</text>`,
    '</svg>',
  ].join('\n');
}
