// Arrivals over time for one event, drawn by uPlot (a charting library, canvas): the running total of
// persons or guests in, per 15 minutes. Reloads when `version` changes (Today bumps it with each live
// check-in). A text line says the same for screen readers.
import uPlot from 'uplot';
import { ok } from '@portico/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import { lang, t } from '../i18n.js';
import type { Session } from '../session.js';

const HEIGHT = 150;
const BUCKET_S = 15 * 60;

export function ArrivalsChart(props: { session: Session; eventId: string; version: unknown }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [summary, setSummary] = useState('');

  useEffect(() => {
    let live = true;
    void props.session.api
      .GET('/v1/events/{id}/arrivals', { params: { path: { id: props.eventId }, query: { minutes: 15 } } })
      .then((res) => {
        if (!live || !box.current) return;
        const { buckets } = ok(res);
        // The running total at the end of each bucket, from 0 at the start of the first: the first
        // arrivals draw a rise, not a lone dot.
        const starts = buckets.map((b) => Date.parse(b.at) / 1000);
        const xs = starts.length ? [starts[0]!, ...starts.map((x) => x + BUCKET_S)] : [];
        const ys = buckets.length ? [0, ...buckets.map((b) => b.total)] : [];
        const last = buckets[buckets.length - 1];
        setSummary(
          last
            ? t('arrivalsSummary', {
                total: last.total,
                time: new Date(Date.parse(last.at) + 15 * 60_000).toLocaleTimeString(lang(), {
                  timeStyle: 'short',
                }),
              })
            : t('noArrivals'),
        );
        if (plot.current) {
          plot.current.setData([xs, ys]);
          return;
        }
        if (buckets.length === 0) return;
        const time = (d: Date) => d.toLocaleTimeString(lang(), { hour: '2-digit', minute: '2-digit' });
        plot.current = new uPlot(
          {
            width: box.current.clientWidth || 300,
            height: HEIGHT,
            legend: { show: false },
            // Room for the last time label at the right edge.
            padding: [8, 28, 0, 0],
            cursor: { show: false },
            scales: {
              x: { time: true },
              y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
            },
            axes: [
              { space: 70, values: (_u, splits) => splits.map((s) => time(new Date(s * 1000))) },
              { size: 40 },
            ],
            series: [
              {},
              {
                label: t('arrived'),
                stroke: '#0172ad',
                width: 2,
                fill: 'rgba(1, 114, 173, 0.12)',
                points: { show: false },
              },
            ],
          },
          [xs, ys],
          box.current,
        );
      })
      .catch(() => live && setSummary(''));
    return () => {
      live = false;
    };
  }, [props.eventId, props.version]);

  // The chart follows the width of its card.
  useEffect(() => {
    const el = box.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const watcher = new ResizeObserver(() =>
      plot.current?.setSize({ width: el.clientWidth, height: HEIGHT }),
    );
    watcher.observe(el);
    return () => {
      watcher.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  return (
    <figure class="arrivals">
      <div ref={box} class="arrivals-plot" aria-hidden="true" />
      <figcaption class="muted">{summary}</figcaption>
    </figure>
  );
}
