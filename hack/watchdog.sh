#!/usr/bin/env bash
# watchdog.sh <parent-pid> <command> [args...]
# Runs a command and kills it when the parent process disappears, so a test runner that is
# SIGKILLed or crashes never leaves etcd, kube-apiserver or moto running. Signals sent to the
# watchdog are forwarded to the command. Started as a process group of its own (as
# test/support/process.ts starts it), it stops the whole group when the parent is gone: the
# command and whatever the command started. It exits with the command's status as soon as the
# command ends.
set -u
parent=$1; shift
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
# Signals the watchdog's process group when it leads one, else the command alone.
stop() { # stop <signal>
  if kill -0 -- "-$$" 2>/dev/null; then kill "-$1" -- "-$$" 2>/dev/null
  else kill "-$1" "$child" 2>/dev/null; fi
}
while kill -0 "$child" 2>/dev/null; do
  if ! kill -0 "$parent" 2>/dev/null; then
    trap '' TERM
    stop TERM
    sleep 2
    stop KILL
    break
  fi
  # Half a second between checks of the parent, cut short when the command ends.
  sleep 0.5 & sleeper=$!
  wait -n "$child" "$sleeper" 2>/dev/null
  kill "$sleeper" 2>/dev/null
done
wait "$child"
