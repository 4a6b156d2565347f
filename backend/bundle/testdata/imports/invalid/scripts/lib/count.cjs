const name = process.env.MODULE || "os";
const dep = require(name);
const undeclared = require("./undeclared.cjs");
module.exports = { dep, undeclared };
