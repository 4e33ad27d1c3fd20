#!/bin/sh
# The demo's second agent: a stand-in reviewer in its own tmux pane. It answers every message
# Uplink delivers to it, the way a real agent would reply in its pane.
printf 'reviewer ready: send me a message\n'
while IFS= read -r line; do
  case "$line" in
    *'[uplink from:'*) printf 'reviewer: read it. Looks good to me, as long as the tests pass first.\n' ;;
    '') ;;
    *) printf 'reviewer: (not a message for me)\n' ;;
  esac
done
