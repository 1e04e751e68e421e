// Node 22 refuses to start a single executable application that ignores NODE_OPTIONS (ours:
// execArgvExtension "none") whenever NODE_REPL_EXTERNAL_MODULE is set, even empty: exit 9,
// "NODE_REPL_EXTERNAL_MODULE can't be used with kDisableNodeOptionsEnv" (src/node.cc,
// InitializeNodeWithArgsInternal), before any code of ours runs. No option of the single
// executable turns that check off, so a variable some other program left in a musician's
// environment would keep the agent from ever starting.
//
// The check reads the variable by the C string "NODE_REPL_EXTERNAL_MODULE" in the binary's
// read-only data. Its first byte made NUL, the check asks for the variable "" (never set: getenv
// and GetEnvironmentVariableW find nothing), and passes. Nothing else reads that C string: the
// REPL reads the variable from JavaScript (the snapshot's own copies of the name, left untouched:
// the snapshot is checksummed, and a single executable never starts the REPL anyway).

const NAME = Buffer.from('NODE_REPL_EXTERNAL_MODULE', 'latin1');
/** V8's snapshot keeps a string as a header ending in its length (u32 little-endian) before its bytes. */
const SNAPSHOT_LENGTH = Buffer.from([NAME.length, 0, 0, 0]);

/**
 * Where the C string NODE_REPL_EXTERNAL_MODULE (NUL before and after, not a snapshot string)
 * is in a Node binary.
 *
 * @param {Buffer} binary
 * @returns {number[]}
 */
export function replModuleNameOffsets(binary) {
  const offsets = [];
  for (let i = binary.indexOf(NAME); i !== -1; i = binary.indexOf(NAME, i + 1)) {
    const cString = i > 0 && binary[i - 1] === 0 && binary[i + NAME.length] === 0;
    if (cString && !binary.subarray(i - 4, i).equals(SNAPSHOT_LENGTH)) offsets.push(i);
  }
  return offsets;
}

/**
 * Makes a Node binary start whatever NODE_REPL_EXTERNAL_MODULE says (see above), in place.
 * Throws when the binary does not have exactly one such C string (another Node version: look at
 * its node.cc before packaging with it) or has it already emptied.
 *
 * @param {Buffer} binary
 * @param {string} target e.g. linux-x64, for the message
 */
export function ignoreReplModuleVariable(binary, target) {
  const offsets = replModuleNameOffsets(binary);
  if (offsets.length !== 1) {
    throw new Error(
      `the ${target} Node binary has ${offsets.length} C strings NODE_REPL_EXTERNAL_MODULE, not 1: this Node version is not the one packaging/src/node-startup.mjs was written for; check how its src/node.cc reads the variable before packaging with it`,
    );
  }
  binary[offsets[0]] = 0;
}
