#!/bin/sh
# The faulted sync scenario of test/faults/figures-under-faults.test.ts (npm run test:slow runs 2 rounds), 10 rounds in a row (each
# on a fresh key prefix, on a private Redis): every round must end with the maintained
# relationship figures equal to their rebuild. About 20 s a round on a 2-core machine.
set -e
cd "$(dirname "$0")/.."
FAULTED_SYNC_ROUNDS="${1:-10}" exec npx vitest run --config vitest.slow.config.ts test/faults/figures-under-faults.test.ts -t '^relationship figures under store faults sync'
