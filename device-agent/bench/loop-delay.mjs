// Preloaded into the agent by bench/decide.ts (`node --import ./bench/loop-delay.mjs`): the delay of the
// agent's own event loop, sent to the bench on request over the IPC channel and started afresh.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();
process.on('message', (message) => {
  if (message !== 'loop-delay') return;
  const ms = (ns) => Math.round(ns / 1e4) / 100;
  process.send?.({
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    mean: ms(histogram.mean),
  });
  histogram.reset();
});
// The channel must not keep the agent alive once it is told to stop.
process.channel?.unref();
