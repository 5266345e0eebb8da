// React 19's scheduler uses MessageChannel, which jsdom under Jest 29 does not provide.
const { MessageChannel, MessagePort } = require('worker_threads');

if (typeof global.MessageChannel === 'undefined') {
  Object.assign(global, { MessageChannel, MessagePort });
}
