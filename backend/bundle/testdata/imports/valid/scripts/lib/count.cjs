"use strict";
const assert = require("assert");
const { join } = require("node:path");
const helper = require("./helper.cjs");

exports.count = function count(input) {
  assert.ok(input !== undefined);
  return helper.length(join("a", String(input)));
};
