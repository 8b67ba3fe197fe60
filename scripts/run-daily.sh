#!/usr/bin/env bash
# One scheduled run of tap-report-dump into a Singer target that cannot lose the state.
# The new state is written beside the old one and moved into place only when the tap
# and the target both succeeded and the target printed a state; otherwise the old
# state stays as it was, so the next run goes on from it. See docs/schedule.md.
#
# Exit codes: 0 the state advanced; 1 an unexpected error (bash's own message); 2 a bad setting
# or a missing tool; 3 the tap failed; 4 the target failed; 5 the target printed no state;
# 75 another run still holds the lock (sysexits' "try again later").
set -euo pipefail

me=run-daily
usage() {
  cat <<'EOF'
Usage: run-daily.sh [--tap CMD] [--target CMD] [--config FILE] [--catalog FILE]
                    [--state FILE] [--log-dir DIR] [--keep-logs-days N]
Each option has an environment variable; an option wins over its variable.
  --tap CMD             RUN_TAP             the tap's command line (default: tap-report-dump)
  --target CMD          RUN_TARGET          the target's command line (default: target-postgres --config target.json)
  --config FILE         RUN_CONFIG          the tap's config (default: tap.json)
  --catalog FILE        RUN_CATALOG         the tap's catalog (default: none, every stream)
  --state FILE          RUN_STATE           the state file (default: state.json)
  --log-dir DIR         RUN_LOG_DIR         where the logs go (default: logs)
  --keep-logs-days N    RUN_KEEP_LOGS_DAYS  logs older than N days (up to 99999) are removed (default: 14)
Exit codes: 0 state advanced, 1 unexpected error, 2 bad setting, 3 tap failed,
4 target failed, 5 no state from the target, 75 another run holds the lock.
EOF
}

# A line in the run's log. A run that succeeds prints nothing, so cron mails only a failure.
note() {
  if [ -n "${run_log:-}" ]; then echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $*" >>"$run_log"; fi
}
# A failure: one line on stderr (cron's mail, the journal) and in the run's log.
fail() { # exit code, message
  local code=$1; shift
  echo "$me: $*" >&2
  note "$*"
  exit "$code"
}

tap=${RUN_TAP:-tap-report-dump}
target=${RUN_TARGET:-target-postgres --config target.json}
config=${RUN_CONFIG:-tap.json}
catalog=${RUN_CATALOG:-}
state=${RUN_STATE:-state.json}
log_dir=${RUN_LOG_DIR:-logs}
keep_days=${RUN_KEEP_LOGS_DAYS:-14}

while [ $# -gt 0 ]; do
  case $1 in
    --tap | --target | --config | --catalog | --state | --log-dir | --keep-logs-days)
      [ $# -ge 2 ] || fail 2 "$1 needs a value; see --help"
      case $1 in
        --tap) tap=$2 ;;
        --target) target=$2 ;;
        --config) config=$2 ;;
        --catalog) catalog=$2 ;;
        --state) state=$2 ;;
        --log-dir) log_dir=$2 ;;
        --keep-logs-days) keep_days=$2 ;;
      esac
      shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) fail 2 "unknown option $1; see --help" ;;
  esac
done

# Settings are checked before anything runs, so a typo never costs a run.
command -v flock >/dev/null || fail 2 "flock is not installed: install util-linux (it keeps two runs from sharing the state)"
command -v node >/dev/null || fail 2 "node is not on the PATH: it checks the state the target prints (the tap needs it too)"
[ -r "$config" ] || fail 2 "cannot read the tap's config $config: set --config or RUN_CONFIG"
[ -z "$catalog" ] || [ -r "$catalog" ] || fail 2 "cannot read the catalog $catalog: set --catalog or RUN_CATALOG, or leave it empty"
[[ $keep_days =~ ^[0-9]{1,5}$ ]] || fail 2 "--keep-logs-days must be a whole number of days up to 99999, not $keep_days"
# Base 10: bash reads a leading zero as octal (08 would be an error, 010 eight days).
keep_days=$((10#$keep_days))
state_dir=$(dirname -- "$state")
[ -d "$state_dir" ] && [ -w "$state_dir" ] || fail 2 "cannot write in $state_dir, the state's folder: set --state or RUN_STATE"
mkdir -p -- "$log_dir" || fail 2 "cannot make the log folder $log_dir: set --log-dir or RUN_LOG_DIR"

# One run at a time: a second run would start from the same state and race the first to replace it.
lock=$state.lock
exec 9>>"$lock"
if ! flock -n 9; then
  fail 75 "another run still holds $lock ($(head -c 200 -- "$lock")); this one did not start"
fi
# The lock file says who holds it; the lock itself is the flock, released when this process ends.
echo "pid $$ since $(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$lock"

stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
tap_log=$log_dir/$stamp.tap.log
target_log=$log_dir/$stamp.target.log
run_log=$log_dir/$stamp.run.log
# Only this script's own log names, so nothing else in the folder is ever removed.
find "$log_dir" -maxdepth 1 -type f -name '????-??-??T??????Z.*.log' -mmin +$((keep_days * 1440)) -delete

# A run killed mid-way leaves its temporary state; holding the lock, this run may remove it.
rm -f -- "$state".new.*
new_state=$(mktemp -- "$state.new.XXXXXX")
trap 'rm -f -- "$new_state"' EXIT

tap_args=(--config "$config")
[ -z "$catalog" ] || tap_args+=(--catalog "$catalog")
# No state file yet: the first run, which reads everything.
[ ! -e "$state" ] || tap_args+=(--state "$state")

note "run started"
# The commands are command lines, as typed in a shell; the tap's arguments are passed apart so paths keep their spaces.
set +e
bash -c "$tap \"\$@\"" tap "${tap_args[@]}" 2>>"$tap_log" | bash -c "$target" 2>>"$target_log" >"$new_state"
statuses=("${PIPESTATUS[@]}")
set -e
tap_code=${statuses[0]}
target_code=${statuses[1]}

if [ "$target_code" -ne 0 ]; then
  fail 4 "the target failed (exit $target_code; the tap exited $tap_code); $state kept as it was; see $target_log"
fi
if [ "$tap_code" -ne 0 ]; then
  fail 3 "the tap failed (exit $tap_code); $state kept as it was; see $tap_log"
fi
# The target prints each state it committed; the last one is where the next run starts.
if ! node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l.trim() !== "");
  const last = JSON.parse(lines[lines.length - 1]);
  if (last === null || typeof last !== "object" || Array.isArray(last) || Object.keys(last).length === 0) process.exit(1);
  require("fs").writeFileSync(process.argv[1], JSON.stringify(last) + "\n");
' "$new_state" 2>/dev/null; then
  fail 5 "the target exited 0 but its last line is not a state (a non-empty JSON object); $state kept as it was"
fi
# On disk before the move, so a power cut cannot leave an empty state file behind it.
sync -- "$new_state"
mv -f -- "$new_state" "$state"
note "run succeeded; $state advanced"
