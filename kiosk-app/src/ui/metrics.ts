// Figures the browser tests print (issue targets): first paint; for each person, a face in view to
// the result on screen; the last challenge frame to the result; long tasks; how the face guide found
// the face (in the page, or by a round trip to the agent) and what each look cost.
export const metrics = {
  attractPaintMs: -1,
  /** From the first frame that showed the face of an arrival to its result painted, one per person. */
  faceInViewToResultMs: [] as number[],
  /** Whether each of those needed the active challenge (same order). */
  challenged: [] as boolean[],
  /** When each of those results was painted (ms since navigation): the door's pace. */
  resultsAt: [] as number[],
  lastFrameToResultMs: [] as number[],
  longTasksMs: [] as number[],
  /** When each long task started (ms since navigation), beside its duration in longTasksMs. */
  longTasksAt: [] as number[],
  /** `page`: MediaPipe in the page; `agent`: `POST /agent/face-box` per look (the page's did not load). */
  guide: null as 'page' | 'agent' | null,
  /** Looks by each (with the page's detector, the agent is asked only about faces too far for it). */
  guideLooks: { page: 0, agent: 0 },
  /** The last 50 looks of the guide, ms each (a detection in the page, or a round trip). */
  guideMs: [] as number[],
  /** When each of those looks started (ms since navigation): the pause between looks is the pace. */
  guideAt: [] as number[],
};
(window as unknown as { kioskMetrics: typeof metrics }).kioskMetrics = metrics;
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      metrics.longTasksMs.push(Math.round(e.duration));
      metrics.longTasksAt.push(Math.round(e.startTime));
    }
  }).observe({ type: 'longtask', buffered: true });
} catch {
  // Browsers without the Long Tasks API: nothing to measure.
}

/** Calls `then` with the time once the screen has painted what was just rendered. */
export function afterPaint(then: (at: number) => void) {
  requestAnimationFrame(() => requestAnimationFrame(() => then(performance.now())));
}
