// Reads a trace.json with Chrome DevTools' trace engine (npm @paulirish/trace_engine, the
// Performance panel's parser) and checks that it binds every flow arrow irqsim wrote: each
// arrow one flow, each of its points bound to a slice. Prints the counts; exits 1 if any
// arrow or point is left unbound. Usage: node trace-flows.mjs TRACE.json
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine';

// The engine expects a browser's DOMRect (its README: polyfill it in Node).
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, { x, y, width, height });
  }
};

const file = process.argv[2];
const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const flows = model.parsedTrace(0).data.Flows.flows;
const arrows = events.filter((e) => e.ph === 's').length;
const points = events.filter((e) => ['s', 't', 'f'].includes(e.ph)).length;
const bound = flows.reduce((n, f) => n + f.length, 0);
console.log(`${file}: ${arrows} arrows of ${points} points; the trace engine binds ${flows.length} flows of ${bound} points`);
if (arrows === 0 || flows.length !== arrows || bound !== points) {
  console.log('FAIL: Chrome DevTools leaves flow arrows unbound');
  process.exit(1);
}
