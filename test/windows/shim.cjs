// Preloaded into Windows Node under Wine only (test harness, never product code).
// Wine limit: libuv sets TCP keep-alive (setsockopt SO_KEEPALIVE) on a socket before it is
// connected, which Wine 8 refuses, so every outgoing HTTP request fails with `UNKNOWN` (-4094).
// This defers setKeepAlive until the socket is connected, as a real Windows would accept it.
'use strict';
const net = require('net');
const original = net.Socket.prototype.setKeepAlive;
net.Socket.prototype.setKeepAlive = function setKeepAlive(...args) {
  if (this.connecting) {
    this.once('connect', () => original.apply(this, args));
    return this;
  }
  return original.apply(this, args);
};
