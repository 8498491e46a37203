#!/bin/sh
# embed.sh NAME FILE: print a C file defining `const char NAME[]` with FILE's bytes.
set -e
name=$1
file=$2
printf '/* generated from %s by embed.sh: do not edit */\n' "$(basename "$file")"
printf '#include <stddef.h>\nconst char %s[] = {\n' "$name"
od -An -v -tx1 "$file" | sed -e 's/  */ /g' -e 's/^ //' -e '/^$/d' -e 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'
printf '0x00 };\nconst size_t %s_len = sizeof %s - 1;\n' "$name" "$name"
