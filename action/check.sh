#!/usr/bin/env bash
# The check step of action.yml: `specsheet check $SPECSHEET_MODELS $SPECSHEET_ARGS`, its Markdown
# table (or its error line) appended to $GITHUB_STEP_SUMMARY and shown in the log, and its exit
# code the step's result (0 within every limit, 1 a limit exceeded, 2 bad input).
# The inputs are split at white space (no quoting): model names and options hold none.
set -u
read -r -a models <<< "${SPECSHEET_MODELS:?the models input is required}"
read -r -a args <<< "${SPECSHEET_ARGS:-}"
summary="${GITHUB_STEP_SUMMARY:-/dev/null}"
table="$(mktemp)"
errors="$(mktemp)"
trap 'rm -f "$table" "$errors"' EXIT
status=0
specsheet check "${models[@]}" "${args[@]}" --format markdown >"$table" 2>"$errors" || status=$?
{
  echo "### specsheet check ${models[*]}"
  echo
  cat "$table"
  if [ -s "$errors" ]; then
    echo
    echo '```'
    cat "$errors"
    echo '```'
  fi
  echo
  case "$status" in
    0) echo "Every limit holds." ;;
    1) echo "**A limit is exceeded** (exit 1)." ;;
    *) echo "**specsheet could not check** (exit $status)." ;;
  esac
} >>"$summary"
cat "$table"
cat "$errors" >&2
exit "$status"
