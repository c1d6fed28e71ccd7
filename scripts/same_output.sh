#!/usr/bin/env bash
# Behaviour unchanged across a refactor: two krphase binaries, the same database, the same
# commands, byte for byte the same output.
#
#   scripts/same_output.sh [--old-rev REV | --old BIN] [--new BIN] [--keep DIR] DB...
#
# The old binary is built from REV (default 75f9585, the commit before the analyzer's rooms
# moved) in a temporary `git worktree` with its own target directory, both removed afterwards;
# or --old names one already built. The new one is this checkout's debug build (built if
# missing) unless --new names one. For every DB, every command below runs once with each binary
# on its own fresh copy of the database, from its own empty folder:
#
#   runs, report (all runs, each run id, each label, --by rank, and -o FILE) and compare (every
#   pair of labels, in one order, and --what runs / measurements on the first pair, --margin),
#   each in every format; export perfetto (pftrace and JSON, all runs and each label), export
#   parquet (all runs and each label), plot (all runs).
#
# Compared: the exit status, stdout, stderr and every file the command wrote. Masked before the
# comparison, and nothing else: the provenance block's krphase commit (a 12-hex-digit id on a line
# naming the commit) and its generation time, and the exported_at time of the rocpd and Parquet
# exports (an ISO-8601 UTC time on a line naming `generated` or `exported_at`). The database is
# the one fixed input: make it once (`krphase demo -d DIR` gives DIR/krphase.db) and pass it here.
#
# Prints one line per database (commands run, identical, different) and the first differences;
# exits 1 if any command's output differs. --keep DIR keeps every output under DIR.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
old_rev=75f9585
old_bin=
new_bin=
keep=
dbs=()
while [ $# -gt 0 ]; do
    case "$1" in
        --old-rev) old_rev=$2; shift 2 ;;
        --old) old_bin=$2; shift 2 ;;
        --new) new_bin=$2; shift 2 ;;
        --keep) keep=$2; shift 2 ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "same_output.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) dbs+=("$1"); shift ;;
    esac
done
if [ ${#dbs[@]} -eq 0 ]; then
    echo "same_output.sh: no database given (see --help)" >&2
    exit 2
fi
for db in "${dbs[@]}"; do
    [ -f "$db" ] || { echo "same_output.sh: $db is not a file" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/same-output.XXXXXX")
cleanup() {
    if [ -n "${old_tree:-}" ]; then
        git -C "$top" worktree remove --force "$old_tree" >/dev/null 2>&1 || true
    fi
    if [ -z "$keep" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT
# Interrupted or killed: exit, which runs the cleanup above.
trap 'exit 1' INT TERM

if [ -z "$old_bin" ]; then
    old_tree="$work/old-tree"
    echo "building krphase at $old_rev (debug, analyzer only) in a temporary worktree" >&2
    git -C "$top" worktree add --quiet --detach "$old_tree" "$old_rev"
    (cd "$old_tree" && CARGO_TARGET_DIR="$old_tree/target" cargo build -q -p krphase-analyzer)
    cp "$old_tree/target/debug/krphase" "$work/krphase-old"
    git -C "$top" worktree remove --force "$old_tree"
    old_tree=
    old_bin="$work/krphase-old"
fi
if [ -z "$new_bin" ]; then
    (cd "$top" && cargo build -q -p krphase-analyzer)
    new_bin="$top/target/debug/krphase"
fi
# Each binary runs as `krphase` (a report quotes its command line, argv[0] included).
mkdir -p "$work/bin-old" "$work/bin-new"
ln -s "$(realpath "$old_bin")" "$work/bin-old/krphase"
ln -s "$(realpath "$new_bin")" "$work/bin-new/krphase"
old_bin="$work/bin-old/krphase"
new_bin="$work/bin-new/krphase"

# Masks what differs by build and by the clock only (see the top of this file).
mask() {
    sed -E \
        -e '/[Cc]ommit/ s/\b[0-9a-f]{12}\b/<commit>/g' \
        -e '/generated|exported_at/ s/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z?/<time>/g' \
        "$1"
}

# Runs one command with one binary: $1 side (old|new), $2 binary, $3 database, $4 command index,
# the rest the command's arguments. Both sides run at the same paths (the database copy and the
# folder it runs in), so a path an output names is the same on both; stdout, stderr, the exit
# status and the written files are then moved to $work/$side/$index/.
run_one() {
    local side=$1 bin=$2 db=$3 i=$4
    shift 4
    local dir="$work/$side/$i" run="$work/run"
    rm -rf "$run"
    mkdir -p "$run/cwd" "$dir"
    cp "$db" "$run/db.sqlite"
    set +e
    (cd "$run/cwd" && TZ=UTC LC_ALL=C COLUMNS=120 NO_COLOR=1 \
        "$bin" --db "$run/db.sqlite" "$@" >"$dir/stdout" 2>"$dir/stderr" </dev/null)
    echo $? >"$dir/status"
    set -e
    # The database copy is an input, not an output.
    mv "$run/cwd" "$dir/cwd"
}

# Whether the two sides of command $1 wrote the same bytes (after masking); prints the first
# differing file's diff when not.
same() {
    local i=$1 a="$work/old/$1" b="$work/new/$1" f rel
    local files
    files=$( (cd "$a" && find . -type f; cd "$b" && find . -type f) | sort -u)
    for rel in $files; do
        if [ ! -f "$a/$rel" ] || [ ! -f "$b/$rel" ]; then
            echo "  $rel written by one side only"
            return 1
        fi
        if ! cmp -s <(mask "$a/$rel") <(mask "$b/$rel"); then
            echo "  $rel differs:"
            if grep -Iq . "$a/$rel" 2>/dev/null; then
                diff <(mask "$a/$rel") <(mask "$b/$rel") | head -8 | sed 's/^/    /'
            else
                cmp <(mask "$a/$rel") <(mask "$b/$rel") | sed 's/^/    /'
            fi
            return 1
        fi
    done
}

formats=(table csv json markdown html)
failed=0
for db in "${dbs[@]}"; do
    db=$(realpath "$db")
    # The runs' ids and every label (of runs and of whole-run measurements), read from the
    # database itself.
    mapfile -t ids < <(sqlite3 "$db" 'SELECT id FROM krphase_run ORDER BY id')
    mapfile -t labels < <(sqlite3 "$db" "SELECT DISTINCT label FROM (
        SELECT label FROM krphase_run UNION SELECT label FROM krphase_measurement)
        WHERE label IS NOT NULL AND label <> '' ORDER BY label")
    cmds=()
    for f in "${formats[@]}"; do
        cmds+=("runs --format $f")
        cmds+=("report --format $f")
        cmds+=("report --by rank --format $f")
        cmds+=("report --format $f -o out.$f")
        for id in "${ids[@]}"; do cmds+=("report --run $id --format $f"); done
        for l in "${labels[@]}"; do cmds+=("report --label $l --format $f"); done
        for ((x = 0; x < ${#labels[@]}; x++)); do
            for ((y = x + 1; y < ${#labels[@]}; y++)); do
                cmds+=("compare ${labels[x]} ${labels[y]} --format $f")
            done
        done
        if [ ${#labels[@]} -ge 2 ]; then
            for what in runs measurements; do
                cmds+=("compare ${labels[0]} ${labels[1]} --what $what --format $f")
            done
            cmds+=("compare ${labels[0]} ${labels[1]} --margin 5 --format $f -o cmp.$f")
        fi
        if [ ${#ids[@]} -ge 2 ]; then
            cmds+=("compare ${ids[0]} ${ids[1]} --format $f")
        fi
    done
    cmds+=("export perfetto -o trace.pftrace" "export perfetto -o trace.json")
    cmds+=("export parquet -d pq" "plot -d plots")
    for l in "${labels[@]}"; do
        cmds+=("export perfetto $l -o $l.pftrace" "export perfetto $l -o $l.json")
        cmds+=("export parquet $l -d pq-$l")
    done

    rm -rf "$work/old" "$work/new"
    same_n=0
    diff_n=0
    for i in "${!cmds[@]}"; do
        # shellcheck disable=SC2086 # each command is split into its arguments on purpose
        run_one old "$old_bin" "$db" "$i" ${cmds[i]}
        # shellcheck disable=SC2086
        run_one new "$new_bin" "$db" "$i" ${cmds[i]}
        if out=$(same "$i"); then
            same_n=$((same_n + 1))
        else
            diff_n=$((diff_n + 1))
            if [ $diff_n -le 10 ]; then
                echo "differs: krphase ${cmds[i]}"
                echo "$out"
            fi
        fi
    done
    ok=0
    for i in "${!cmds[@]}"; do
        [ "$(cat "$work/new/$i/status")" = 0 ] && ok=$((ok + 1))
    done
    echo "$(basename "$db"): ${#cmds[@]} commands (${#ids[@]} runs, ${#labels[@]} labels;" \
        "$ok exit 0): $same_n identical, $diff_n different"
    [ $diff_n -eq 0 ] || failed=1
    if [ -n "$keep" ]; then
        mkdir -p "$keep/$(basename "$db")"
        cp -r "$work/old" "$work/new" "$keep/$(basename "$db")/"
    fi
done
exit $failed
