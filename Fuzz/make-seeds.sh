#!/usr/bin/env bash
# Writes the committed seed corpus again, from the sample conversation and the sample plugins' metadata.
# Needs python3, objcopy (binutils) and the toolchain's clang with lld; builds the sample plugins (debug).
# The corpus is committed, so this runs only when the samples change: `bash Fuzz/make-seeds.sh`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
corpus=Fuzz/Corpus
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for product in DemoMessages DemoMedia MatrixBridge CRating; do
    swift build --product "$product" >/dev/null
done
plugins="$(swift build --show-bin-path)"
clang="$(dirname "$(command -v swift)")/clang"
"$clang" -fuse-ld=lld -shared -nostdlib -fPIC -I Sources/CMissivePlugin/include -Wl,-s -Wl,-z,noseparate-code \
    -Wl,-z,max-page-size=16 -Wl,--build-id=none Fuzz/Seeds/tiny.c -o "$work/libTiny.so"
for name in DemoMessages DemoMedia MatrixBridge CRating; do
    objcopy -O binary --only-section=missive_meta "$plugins/lib$name.so" "$work/$name.meta"
done
objcopy -O binary --only-section=missive_meta "$work/libTiny.so" "$work/Tiny.meta"

# Only the seeds this script writes: regression-* inputs stay.
rm -f "$corpus"/envelope/conversation-* "$corpus"/decoders/conversation-* "$corpus"/metadata/section-* "$corpus"/metadata/file-*
mkdir -p "$corpus"/envelope "$corpus"/decoders "$corpus"/metadata
python3 - "$corpus" "$work" <<'PY'
import json, struct, sys
corpus, work = sys.argv[1], sys.argv[2]

# Envelopes: each line of the sample conversation as it is. Decoders: each line's objectName, a newline and
# its content exactly as written.
# Split on newlines only: a line may hold U+2028, which splitlines() would also split on.
lines = [line for line in open("SampleData/conversation.jsonl", encoding="utf-8", newline="").read().split("\n") if line]
for number, line in enumerate(lines, 1):
    open(f"{corpus}/envelope/conversation-{number:02d}", "w", encoding="utf-8").write(line)
    envelope = json.loads(line)
    start = line.index('"content":') + len('"content":')
    _, end = json.JSONDecoder().raw_decode(line, start)
    open(f"{corpus}/decoders/conversation-{number:02d}", "w", encoding="utf-8").write(envelope["objectName"] + "\n" + line[start:end])

def shared_object(section):
    """The ELF file FuzzSupport's ELFWriter writes: a header, the name table, the section, three headers."""
    names = b"\0.shstrtab\0missive_meta\0"
    contents_offset = 64 + len(names)
    table = contents_offset + len(section)
    table += (8 - table % 8) % 8
    header = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, table, 0, 64, 0, 0, 64, 3, 1)
    body = (header + names + section).ljust(table, b"\0")
    def section_header(name, kind, offset, size):
        return struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, offset, size, 0, 0, 1, 0)
    return body + bytes(64) + section_header(1, 3, 64, len(names)) + section_header(11, 1, contents_offset, len(section))

# Metadata: a first byte of 0 makes the rest a section, 1 a whole file.
for name in ["DemoMessages", "DemoMedia", "MatrixBridge", "CRating", "Tiny"]:
    section = open(f"{work}/{name}.meta", "rb").read()
    open(f"{corpus}/metadata/section-{name}", "wb").write(b"\0" + section)
open(f"{corpus}/metadata/file-Tiny-lld", "wb").write(b"\1" + open(f"{work}/libTiny.so", "rb").read())
for name in ["CRating", "MatrixBridge"]:
    section = open(f"{work}/{name}.meta", "rb").read()
    open(f"{corpus}/metadata/file-{name}-minimal", "wb").write(b"\1" + shared_object(section))
PY
echo "make-seeds: $(ls "$corpus"/envelope | wc -l) envelope, $(ls "$corpus"/decoders | wc -l) decoders and $(ls "$corpus"/metadata | wc -l) metadata seeds"
