""""Export animation": the GIF decoded with Pillow, the WebM with ffprobe (Debian's ffmpeg): frame
count, size, duration. A GIF frame is saved to test-artifacts/export_gif_frame.png."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
POLYNOMIAL = (ROOT / "examples" / "03_polynomial.py").read_text()

# the animation's bytes (base64) and what the page says about it
EXPORT = """async ([format, size]) => {
  const r = await window.__fg.exportAnimation({ format, size });
  const buf = new Uint8Array(await r.blob.arrayBuffer());
  let bin = "";
  for (let i = 0; i < buf.length; i += 8192) bin += String.fromCharCode(...buf.subarray(i, i + 8192));
  const { DURATIONS, ANIMATION } = await import("/static/js/config.js");
  return { b64: btoa(bin), type: r.blob.type, frames: r.frames, pictures: r.pictures, width: r.width, height: r.height,
           steps: r.steps, still: r.still, ms: r.ms, durations: DURATIONS, animation: ANIMATION, speed: window.__fg.speed };
}"""


def open_program(page, source: str):
    page.goto(page.base + "/")
    page.wait_for_function("document.body.dataset.ready != null", timeout=20000)
    prev = page.evaluate("document.body.dataset.ready")
    page.evaluate("src => { window.__fg.editor.text = src; }", source)
    page.get_by_role("button", name="Run", exact=True).click()
    page.wait_for_function("p => document.body.dataset.ready !== p", arg=prev)
    page.evaluate("window.__fg.playing && document.getElementById('play').click()")


def export(page, fmt: str, size: str) -> tuple[bytes, dict]:
    got = page.evaluate(EXPORT, [fmt, size])
    return base64.b64decode(got.pop("b64")), got


def expected_frames(info: dict) -> int:
    """The player's clock at 30 fps: each step lasts DURATIONS.step, then the last one ANIMATION.endHoldMs."""
    fps, speed = info["animation"]["fps"], info["speed"]
    frames = lambda ms: max(1, round(ms / 1000 * fps))  # noqa: E731
    return (info["steps"] + 1) * frames(info["durations"]["step"] / speed) + frames(info["animation"]["endHoldMs"])


def test_gif_1280x720_decodes_with_the_frames_and_duration_of_the_playback(page):
    from PIL import Image

    open_program(page, POLYNOMIAL)
    data, info = export(page, "gif", "1280x720")
    assert info["type"] == "image/gif"
    assert info["frames"] == expected_frames(info)
    print(f"GIF: {info['frames']} frames ({info['frames'] / 30:.1f} s) as {info['pictures']} pictures, "
          f"{len(data) / 1e6:.2f} MB, in {info['ms'] / 1000:.1f} s")
    im = Image.open(io.BytesIO(data))
    assert im.format == "GIF" and im.size == (1280, 720)
    assert im.n_frames == info["pictures"]
    assert im.info.get("loop") == 0
    total, forward_pixels = 0, 0
    ARTIFACTS.mkdir(exist_ok=True)
    for i in range(im.n_frames):
        im.seek(i)
        total += im.info["duration"]
        if i == info["pictures"] // 3:
            frame = im.convert("RGB")
            frame.save(ARTIFACTS / "export_gif_frame.png")
            # the pulses and lit edges in the forward colour, the caption band at the bottom
            rgb = np.asarray(frame, dtype=np.int16)
            forward_pixels = int((np.abs(rgb - np.array([0x00, 0xA3, 0x7A])).max(axis=2) < 24).sum())
            band = rgb[720 - info["animation"]["captionH"] + 2:]
            assert len(np.unique(band.reshape(-1, 3), axis=0)) > 2  # text on it
    assert abs(total - info["frames"] * 1000 / 30) <= 10  # GIF counts in 1/100 s, rounded on the running clock
    assert forward_pixels > 50
    page.errors.check()


@pytest.mark.skipif(shutil.which("ffprobe") is None, reason="ffprobe not installed (make test installs Debian's ffmpeg)")
def test_webm_of_the_view_decodes_with_ffprobe(page):
    open_program(page, POLYNOMIAL)
    data, info = export(page, "webm", "view")
    assert info["type"] == "video/webm"
    assert info["width"] % 2 == 0 and info["height"] % 2 == 0
    path = ARTIFACTS / "export_animation.webm"
    ARTIFACTS.mkdir(exist_ok=True)
    path.write_bytes(data)
    probe = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
         "stream=codec_name,width,height,nb_read_frames", "-of", "json", str(path)],
        capture_output=True, text=True, check=True)
    stream = json.loads(probe.stdout)["streams"][0]
    print(f"WebM: {stream}, {len(data) / 1e6:.2f} MB, {info['frames']} frames asked, in {info['ms'] / 1000:.1f} s")
    assert stream["codec_name"] in ("vp8", "vp9")
    assert (stream["width"], stream["height"]) == (info["width"], info["height"])
    # MediaRecorder records in real time: a frame can be merged on a busy machine, never added
    assert 0.9 * info["frames"] <= int(stream["nb_read_frames"]) <= info["frames"]
    page.errors.check()


def test_dialog_downloads_a_gif(page, shot, tmp_path):
    from PIL import Image

    open_program(page, (ROOT / "examples" / "01_square_of_sum.py").read_text())
    page.get_by_role("button", name="Export animation").click()
    dialog = page.get_by_role("dialog", name="Export animation")
    dialog.wait_for(state="visible")
    shot(page, "export_animation_dialog")
    with page.expect_download(timeout=60000) as got:
        dialog.get_by_role("button", name="Export").click()
    path = tmp_path / got.value.suggested_filename
    got.value.save_as(path)
    assert path.suffix == ".gif"
    im = Image.open(path)
    assert im.size == (1280, 720) and im.n_frames > 10
    dialog.locator(".anim-status", has_text="saved").wait_for()
    page.errors.check()


def test_reduced_motion_exports_one_still_picture_per_step(page, shot):
    """prefers-reduced-motion: reduce: no pulses gliding between frames, each step one still picture as long as
    a step lasts in playback (the same total duration)."""
    from PIL import Image

    page.emulate_media(reduced_motion="reduce")
    page.set_viewport_size({"width": 1366, "height": 768})
    open_program(page, POLYNOMIAL)
    data, info = export(page, "gif", "1280x720")
    assert info["still"] is True
    assert info["frames"] == expected_frames(info)
    print(f"GIF, reduced motion: {info['pictures']} pictures for {info['frames']} frames")
    assert info["pictures"] == info["steps"] + 1, info  # one per step, and the start
    im = Image.open(io.BytesIO(data))
    assert im.n_frames == info["pictures"]
    fps, speed = info["animation"]["fps"], info["speed"]
    step_ms = max(1, round(info["durations"]["step"] / speed / 1000 * fps)) * 1000 / fps
    durations = []
    for i in range(im.n_frames):
        im.seek(i)
        durations.append(im.info["duration"])
        if i == im.n_frames // 2:
            ARTIFACTS.mkdir(exist_ok=True)
            im.convert("RGB").save(ARTIFACTS / "export_gif_still_frame.png")
    assert all(abs(d - step_ms) <= 10 for d in durations[:-1]), durations  # GIF counts in 1/100 s
    assert durations[-1] > step_ms  # the end holds longer
    # the dialog says so
    page.get_by_role("button", name="Export animation").click()
    dialog = page.get_by_role("dialog", name="Export animation")
    dialog.wait_for(state="visible")
    assert "Reduced motion is on" in dialog.inner_text()
    shot(page, "export_animation_reduced_motion")
    page.errors.check()


def test_without_reduced_motion_the_pulses_glide(page):
    page.emulate_media(reduced_motion="no-preference")
    open_program(page, POLYNOMIAL)
    _, info = export(page, "gif", "1280x720")
    print(f"GIF: {info['pictures']} pictures for {info['frames']} frames (pulses gliding)")
    assert info["still"] is False and info["pictures"] > 2 * (info["steps"] + 1)
