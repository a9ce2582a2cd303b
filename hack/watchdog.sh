#!/usr/bin/env bash
# watchdog.sh <parent-pid> <command> [args...]
# Runs a command and kills it when the parent process disappears, so a test runner that is
# SIGKILLed or crashes never leaves etcd, kube-apiserver or moto running. Signals sent to the
# watchdog are forwarded to the command.
set -u
parent=$1; shift
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
while kill -0 "$child" 2>/dev/null; do
  if ! kill -0 "$parent" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null
    sleep 2
    kill -KILL "$child" 2>/dev/null
    break
  fi
  sleep 0.5 & wait $!
done
wait "$child"
