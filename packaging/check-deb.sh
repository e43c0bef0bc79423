#!/usr/bin/env bash
# Builds the Debian package in a configured build directory (cpack -G DEB) and checks that it carries the
# programs and the desktop integration: usage: packaging/check-deb.sh BUILD_DIR
set -euo pipefail
build="${1:?usage: $0 BUILD_DIR}"
cd "$build"
rm -f jointscope_*.deb
cpack -G DEB >cpack.log 2>&1 || { cat cpack.log; exit 1; }
deb=$(ls -t jointscope_*.deb | head -n1)
contents=$(dpkg-deb -c "$deb")
status=0
required=(./usr/bin/jointscope-cli)
[[ -f app/jointscope-cli-runtime ]] && required+=(./usr/bin/jointscope-cli-runtime) # built with LibTorch
gui=0
[[ -f app/jointscope ]] && gui=1 # built with the GUI: the desktop integration ships with it
if ((gui)); then
  required+=(./usr/bin/jointscope ./usr/share/applications/jointscope.desktop
             ./usr/share/icons/hicolor/scalable/apps/jointscope.svg ./usr/share/mime/packages/jointscope.xml)
fi
for path in "${required[@]}"; do
  if ! grep -q " ${path}\$" <<<"$contents"; then
    echo "check-deb: $deb lacks $path" >&2
    status=1
  fi
done
# The session MIME type the desktop entry announces must be the one the package defines.
if ((gui)); then
mime=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/mime/packages/jointscope.xml 2>/dev/null || true)
grep -q 'type="application/x-jointscope-session"' <<<"$mime" || { echo "check-deb: no application/x-jointscope-session in the MIME xml" >&2; status=1; }
grep -q 'pattern="\*\.jointscope"' <<<"$mime" || { echo "check-deb: no *.jointscope glob in the MIME xml" >&2; status=1; }
fi
((status == 0)) && echo "check-deb: $deb ($(du -h "$deb" | cut -f1)) has ${required[*]}"
exit $status
