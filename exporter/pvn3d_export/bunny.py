"""Where the Stanford bunny's mesh (npm `bunny`, public domain) comes from for the scripts and tests."""
import os
import shutil
import subprocess
import tempfile

FETCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fetch_bunny.sh")


def bunny_json(path=None, required=True):
    """(path of a bunny.json, a temporary folder the caller removes, or None): `path` when given, else
    $PVN3D_BUNNY_JSON when it exists, else fetched by fetch_bunny.sh (npm) into a temporary folder.
    Without npm or network: raises, or returns (None, None) when not `required`."""
    if path:
        return path, None
    env = os.environ.get("PVN3D_BUNNY_JSON")
    if env and os.path.exists(env):
        return env, None
    tmp = tempfile.mkdtemp(prefix="bunny.")
    try:
        out = subprocess.check_output([FETCH, tmp], text=True,
                                      stderr=None if required else subprocess.DEVNULL).strip()
        return out, tmp
    except (OSError, subprocess.CalledProcessError):
        shutil.rmtree(tmp, ignore_errors=True)
        if required:
            raise
        return None, None
