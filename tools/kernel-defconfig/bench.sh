#!/bin/bash
# The defconfig benchmark of docs/kernel.md: Debian's linux-source 6.1,
# x86_64 defconfig (KALLSYMS_ALL, BPF, no DEBUG_INFO), a base that has the
# mds_user_clear static key and its export, the change that removes it,
# and the change with perfbot's padding patch. The change and the padded
# change are incremental rebuilds of the base's tree (bugs.c and the link).
#
#   tools/kernel-defconfig/bench.sh DIR base      # unpack, configure, full build (about 30 min on 2 cores)
#   tools/kernel-defconfig/bench.sh DIR changed   # bugs.c as shipped, rebuild
#   tools/kernel-defconfig/bench.sh DIR diff PERFBOT    # perfbot layout diff base changed: text and json, timed
#   tools/kernel-defconfig/bench.sh DIR padded PERFBOT  # perfbot's --patch on top of the change, rebuild, check
#
# DIR holds linux-source-6.1/ and the copies base.vmlinux, changed.vmlinux,
# padded.vmlinux (and their .System.map), bugs.c.orig and fix.diff.
# JOBS (default 2) and NICE (default 19) set make's -j and nice.
set -euo pipefail

usage="usage: bench.sh DIR base|changed|diff|padded [PERFBOT]"
dir=${1:?$usage}
step=${2:?$usage}
tree=$dir/linux-source-6.1
bugs=arch/x86/kernel/cpu/bugs.c
export KBUILD_BUILD_TIMESTAMP=2024-01-01 KBUILD_BUILD_USER=perfbot KBUILD_BUILD_HOST=perfbot
build() { (cd "$tree" && /usr/bin/time -v nice -n "${NICE:-19}" make -j"${JOBS:-2}" vmlinux); }
keep() { cp "$tree/vmlinux" "$dir/$1.vmlinux" && cp "$tree/System.map" "$dir/$1.System.map"; }

case $step in
base)
	mkdir -p "$dir"
	[ -d "$tree" ] || tar xf /usr/src/linux-source-6.1.tar.xz -C "$dir"
	cd "$tree"
	[ -f "$dir/bugs.c.orig" ] || cp $bugs "$dir/bugs.c.orig"
	if grep -q mds_user_clear "$dir/bugs.c.orig"; then
		echo "bench.sh: $bugs already has mds_user_clear: not Debian's 6.1 tree" >&2
		exit 1
	fi
	# The base: what upstream 6613d82e61 removed, after switch_mm_always_ibpb.
	perl -0pe 's{(DEFINE_STATIC_KEY_FALSE\(switch_mm_always_ibpb\);\n)}{$1\n/* Control MDS CPU buffer clear before returning to user space */\nDEFINE_STATIC_KEY_FALSE(mds_user_clear);\nEXPORT_SYMBOL_GPL(mds_user_clear);\n}' \
		"$dir/bugs.c.orig" >$bugs
	grep -c 'DEFINE_STATIC_KEY_FALSE(mds_user_clear)' $bugs >/dev/null
	make defconfig
	scripts/config -e KALLSYMS -e KALLSYMS_ALL -e BPF -e BPF_SYSCALL -e JUMP_LABEL -e MODULES \
		-d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_DWARF4 -d DEBUG_INFO_DWARF5 -e DEBUG_INFO_NONE
	make olddefconfig
	for o in KALLSYMS_ALL BPF_SYSCALL JUMP_LABEL MODULES DEBUG_INFO_NONE; do
		grep -qx "CONFIG_$o=y" .config || { echo "bench.sh: .config lacks CONFIG_$o=y" >&2; exit 1; }
	done
	build
	keep base
	;;
changed)
	cp "$dir/bugs.c.orig" "$tree/$bugs"
	build
	keep changed
	;;
diff)
	perfbot=${3:?$usage}
	cd "$dir"
	uptime
	for f in text json; do
		/usr/bin/time -v -o diff.$f.time "$perfbot" layout diff -f $f --shifts -1 --top 20 base.vmlinux changed.vmlinux >diff.$f
		grep -E 'Elapsed|Maximum resident' diff.$f.time
	done
	;;
padded)
	perfbot=${3:?$usage}
	cp "$dir/bugs.c.orig" "$tree/$bugs"
	"$perfbot" layout diff --patch "$tree" "$dir/base.vmlinux" "$dir/changed.vmlinux" >"$dir/fix.diff"
	(cd "$tree" && patch -p1 <"$dir/fix.diff")
	build
	keep padded
	uptime
	/usr/bin/time -v -o "$dir/check.time" "$perfbot" layout diff --patch "$tree" --patch-check "$dir/padded.vmlinux" \
		"$dir/base.vmlinux" "$dir/changed.vmlinux" | tee "$dir/check.txt"
	grep -E 'Elapsed|Maximum resident' "$dir/check.time"
	# And the plain diff of the base against the padded change: what stays moved.
	"$perfbot" layout diff --shifts -1 "$dir/base.vmlinux" "$dir/padded.vmlinux" >"$dir/diff-padded.text"
	;;
*)
	echo "bench.sh: unknown step $step; $usage" >&2
	exit 2
	;;
esac
