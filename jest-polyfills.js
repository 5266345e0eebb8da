// React 19's scheduler posts its work through MessageChannel, which Jest 29's jsdom environment lacks. Node's own
// MessageChannel would do, but an open port keeps the process alive and Jest never exits; this one delivers each
// message with setImmediate and so holds the event loop only while a message is pending.
const { setImmediate } = require('timers');

class MessagePortShim {
  constructor() {
    this.onmessage = null;
    this.other = null;
  }
  postMessage(data) {
    const target = this.other;
    setImmediate(() => target.onmessage && target.onmessage({ data }));
  }
  start() {}
  close() {}
  addEventListener() {}
  removeEventListener() {}
}

class MessageChannelShim {
  constructor() {
    this.port1 = new MessagePortShim();
    this.port2 = new MessagePortShim();
    this.port1.other = this.port2;
    this.port2.other = this.port1;
  }
}

if (typeof global.MessageChannel === 'undefined') {
  global.MessageChannel = MessageChannelShim;
}

// jsdom has no canvas; AutoSizeInput measures its text with a 2D context. A fixed-width font is enough for layout
// in tests (the real browser tests measure for real).
if (typeof HTMLCanvasElement !== 'undefined') {
  HTMLCanvasElement.prototype.getContext = function getContext() {
    return { font: '', measureText: (text) => ({ width: String(text).length * 8 }) };
  };
}

// @grafana/scenes creates an IntersectionObserver when loaded (its lazy loader), which jsdom lacks; this one
// reports every element as visible, so lazily loaded panels render at once in tests.
if (typeof global.IntersectionObserver === 'undefined') {
  global.IntersectionObserver = class IntersectionObserver {
    constructor(callback) {
      this.callback = callback;
    }
    observe(target) {
      this.callback([{ isIntersecting: true, target }], this);
    }
    unobserve() {}
    disconnect() {}
    takeRecords() {
      return [];
    }
  };
}

// Scenes' panels measure themselves with ResizeObserver, which jsdom lacks; without sizes they render their chrome.
if (typeof global.ResizeObserver === 'undefined') {
  global.ResizeObserver = class ResizeObserver {
    observe() {}
    unobserve() {}
    disconnect() {}
  };
}
