package knobs

// wrapScript is the POSIX sh script behind every name in a wrapper folder
// (see wrap.go; docs/knobs.md, "How the wrappers work"). The @...@ lines
// are replaced by the variant's settings, single-quoted for the shell.
// It uses only POSIX sh and the builtins cd, pwd and printf; no bash-isms
// (it runs under dash on Debian).
const wrapScript = `#!/bin/sh
# perfbot-wrap: a layout knob of perfbot (package internal/knobs; see
# docs/knobs.md). Generated: do not edit. The folder's name holds a hash of
# this file's settings, so a changed wrapper is another build for perfbot.
#
# Every tool name in this folder is a link to this script. It runs the real
# tool of that name, the first one on PATH outside this folder, with every
# argument unchanged, and adds
#   - the variant's flags at the end of every compile and link (mode cc;
#     not to --version, -dumpversion, -print-* and the like);
#   - the variant's padding, as the first input, to the link of an
#     executable whose output (-o) is one of the job's artifacts
#     ($PERFBOT_ARTIFACTS: absolute paths, one a line), or in cc mode has
#     an artifact's name and lies in the build's folder
#     ($PERFBOT_BUILD_DIR), or matches one of the extra link patterns
#     below. Not to -c, -S, -E, -M, -MM,
#     -fsyntax-only, -shared or -r runs, not to links without -o, not to
#     configure or CMake probes (conftest, cmTC_*: no artifacts), and not
#     when the padding file is on the command line already.
# Each padded or flagged artifact link prints one line to stderr:
#   perfbot-wrap: gcc link bench: +pad text16 (text-pad-16-....s, first), +-falign-functions=64 ...
set -f
wrap_dir=@DIR@
wrap_variant=@VARIANT@
wrap_mode=@MODE@
wrap_flags=@FLAGS@
wrap_pad=@PAD@
wrap_links=@LINKS@

tool=${0##*/}
case $0 in */*) self=${0%/*} ;; *) self= ;; esac

# The real tool, and the PATH it runs with: PATH without this folder (also
# when it is there twice, or as the folder this script was started from),
# so that neither a ccache masquerade folder behind this one nor anything
# the tool starts comes back here.
real= asm= newpath= sep=
IFS=:
for d in $PATH; do
	t=$d
	while :; do case $t in ?*/) t=${t%/} ;; *) break ;; esac; done
	if [ -n "$t" ] && { [ "$t" = "$wrap_dir" ] || [ "$t" = "$self" ]; }; then
		continue
	fi
	newpath=$newpath$sep$d
	sep=:
	if [ -z "$real" ] && [ -f "${d:-.}/$tool" ] && [ -x "${d:-.}/$tool" ]; then
		real=${d:-.}/$tool
	fi
	if [ -z "$asm" ] && [ -f "${d:-.}/as" ] && [ -x "${d:-.}/as" ]; then
		asm=${d:-.}/as
	fi
done
unset IFS
if [ -z "$real" ]; then
	printf 'perfbot-wrap: %s: not found on PATH outside %s\n' "$tool" "$wrap_dir" >&2
	exit 127
fi
PATH=$newpath
export PATH

# Started by a tool this script started (PATH named this folder twice under
# different names): pass everything through, so nothing is added twice.
if [ -n "${PERFBOT_WRAP_ACTIVE-}" ]; then
	exec "$real" "$@"
fi
PERFBOT_WRAP_ACTIVE=$wrap_dir
export PERFBOT_WRAP_ACTIVE

# What kind of run is it?
link=yes out= skip= haspad= query=
padbase=${wrap_pad##*/}
for a do
	if [ -n "$skip" ]; then
		case $skip in
		o) out=$a ;;
		X) case $a in -shared | --shared | -Bshareable | -r | --relocatable | -i) link= ;; esac ;;
		esac
		skip=
		continue
	fi
	if [ -n "$padbase" ]; then
		case $a in "$wrap_pad" | "$padbase" | */"$padbase") haspad=yes ;; esac
	fi
	if [ "$wrap_mode" = ld ]; then
		case $a in
		-r | --relocatable | -i | -shared | --shared | -Bshareable) link= ;;
		--version | -v | -V | --help) query=yes ;;
		-o | --output) skip=o ;;
		--output=*) out=${a#--output=} ;;
		-o?*) out=${a#-o} ;;
		-T | -m | -e | -L | -l | -u | -z | -h | -soname | -Map | -y | -Y | -A | -b | -F | -f | -G | -R | -a | -c | -dT | --script | --entry | --library | --library-path | --undefined | --trace-symbol | --defsym | --dynamic-linker | -rpath | -rpath-link | --sysroot) skip=v ;;
		esac
		continue
	fi
	case $a in
	-c | -S | -E | -M | -MM | -fsyntax-only | -r | -shared | --shared) link= ;;
	--version | --help | --help=* | --target-help | -dumpversion | -dumpfullversion | -dumpmachine | -dumpspecs | -print-* | --print-*) query=yes ;;
	-o | --output) skip=o ;;
	--output=*) out=${a#--output=} ;;
	-o?*) out=${a#-o} ;;
	-Xlinker) skip=X ;;
	-Wl,*)
		IFS=,
		for w in ${a#-Wl,}; do
			case $w in -shared | --shared | -Bshareable | -r | --relocatable | -i) link= ;; esac
		done
		unset IFS
		;;
	-MF | -MT | -MQ | -x | -I | -L | -l | -D | -U | -T | -u | -e | -z | -B | -G | -include | -imacros | -isystem | -idirafter | -iquote | -iprefix | -iwithprefix | -iwithprefixbefore | -isysroot | -imultilib | -Xassembler | -Xpreprocessor | -Xclang | -aux-info | -dumpbase | -dumpbase-ext | -dumpdir | -arch | -target | --param | --sysroot | -specs) skip=v ;;
	esac
done
if [ -n "$query" ]; then
	exec "$real" "$@"
fi

# Is the output one of the job's artifacts? Compared as physical absolute
# paths, so a CMake link run in build/ as "-o bench" matches the artifact
# build/bench. Failing that (cc mode), an output of the artifact's name
# inside the build's folder ($PERFBOT_BUILD_DIR) matches too: zstd links
# programs/obj/conf_<hash>/zstd and copies it to programs/zstd. Probes in
# a scratch folder outside the build's folder never match.
artifact= byname=
if [ -n "$link" ] && [ -n "$out" ]; then
	case $out in
	*/*) odir=${out%/*} obase=${out##*/} ;;
	*) odir=. obase=$out ;;
	esac
	[ -n "$odir" ] || odir=/
	if odir=$(cd "$odir" 2>/dev/null && pwd -P); then
		o=${odir%/}/$obase
		IFS='
'
		for x in ${PERFBOT_ARTIFACTS-}; do
			[ "$x" = "$o" ] && artifact=yes
		done
		for p in $wrap_links; do
			case $o in $p) artifact=yes ;; esac
		done
		if [ -z "$artifact" ] && [ "$wrap_mode" = cc ] && [ -n "${PERFBOT_BUILD_DIR-}" ]; then
			case $o in
			"${PERFBOT_BUILD_DIR%/}"/*)
				for x in ${PERFBOT_ARTIFACTS-}; do
					[ "${x##*/}" = "$obase" ] && artifact=yes byname=" (by name)"
				done
				;;
			esac
		fi
		unset IFS
	fi
fi

note=
if [ -n "$artifact" ] && [ -n "$wrap_pad" ]; then
	if [ -n "$haspad" ]; then
		note="padding $padbase already on the command line, not added"
	elif [ "$wrap_mode" = ld ]; then
		note="+pad $wrap_variant ($padbase, first)"
	else
		note="+pad $wrap_variant ($padbase, first)"
		set -- "$wrap_pad" "$@"
	fi
fi
if [ "$wrap_mode" = cc ] && [ -n "$wrap_flags" ]; then
	[ -n "$artifact" ] && note="${note:+$note, }+$wrap_flags"
	set -- "$@" $wrap_flags
fi
if [ -n "$note" ]; then
	printf 'perfbot-wrap: %s link %s%s: %s\n' "$tool" "$out" "$byname" "$note" >&2
fi

if [ "$wrap_mode" = ld ] && [ -n "$artifact" ] && [ -n "$wrap_pad" ] && [ -z "$haspad" ]; then
	# ld takes no assembler source: assemble the padding for this link.
	if [ -z "$asm" ]; then
		printf 'perfbot-wrap: %s: no as on PATH to assemble %s\n' "$tool" "$wrap_pad" >&2
		exit 127
	fi
	obj=${TMPDIR:-/tmp}/perfbot-pad.$$.o
	"$asm" -o "$obj" "$wrap_pad" || exit 1
	"$real" "$obj" "$@"
	rc=$?
	rm -f "$obj"
	exit $rc
fi
exec "$real" "$@"
`
