"""Test peer: answers a gcr-prompter dialog (gnome-keyring's real prompter) on $DISPLAY with xdotool.

  prompt_answerer.py [--timeout S] [--password-env VAR] [--choice keep|toggle] [--dismiss]

Finds the dialog by its X class (WM_CLASS "gcr-prompter"; its title is empty for "Choose
password for new keyring" and "Unlock Keyring" / "Unlock Login Keyring" for unlocks), focuses it
(`xdotool windowfocus --sync`; no window manager needed), then either presses Escape (--dismiss:
the prompt completes dismissed) or types the password from the environment variable VAR (never
argv; through a 0600 file in XDG_RUNTIME_DIR for `xdotool type --file`) — twice, in Password and
Confirm, for a new keyring's dialog — and presses Return. The unlock dialog's "Automatically unlock
this keyring whenever I'm logged in" box starts checked; --choice toggle unchecks it. Prints one
JSON line (window, title, has_choice, action, seconds until visible and gone). Exit 0 when the
dialog was answered and closed, 1 on timeout, 2 on usage errors.
"""
import argparse, json, os, subprocess, sys, tempfile, time

T0 = time.monotonic()


def xdo(*args, input=None, check=True):
    r = subprocess.run(["xdotool", *args], input=input, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"xdotool {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout.strip()


def dialogs(exclude=()):
    out = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "gcr-prompter"],
                         capture_output=True, text=True).stdout.split()
    found = []
    for w in out:
        if w in exclude:
            continue
        geo = geometry(w)
        if geo and geo[1] > 40:  # skip GTK's 10x10 client-leader window
            found.append(w)
    return found


def geometry(win):
    r = subprocess.run(["xdotool", "getwindowgeometry", "--shell", win], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    d = dict(line.split("=", 1) for line in r.stdout.split() if "=" in line)
    return int(d.get("WIDTH", 0)), int(d.get("HEIGHT", 0))


def visible(win):
    r = subprocess.run(["xwininfo", "-id", win], capture_output=True, text=True)
    return r.returncode == 0 and "IsViewable" in r.stdout


def type_text(text):
    # xdotool type --file reads the text from a file, so the password never appears in argv.
    with tempfile.NamedTemporaryFile("w", dir=os.environ.get("XDG_RUNTIME_DIR"), delete=True) as f:
        os.chmod(f.name, 0o600)
        f.write(text)
        f.flush()
        xdo("type", "--clearmodifiers", "--delay", "8", "--file", f.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--password-env")
    ap.add_argument("--confirm", choices=["auto", "yes", "no"], default="auto")
    ap.add_argument("--choice", choices=["keep", "toggle"], default="keep")
    ap.add_argument("--dismiss", action="store_true")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--settle", type=float, default=0.15, help="pause after the window maps, before typing")
    a = ap.parse_args()
    if "DISPLAY" not in os.environ:
        ap.error("DISPLAY is not set")
    password = os.environ.get(a.password_env) if a.password_env else None
    if password is None and not a.dismiss:
        ap.error("give --password-env VAR, or --dismiss")

    answered = []
    for n in range(a.count):
        deadline = T0 + a.timeout * (n + 1)
        wins = []
        while not wins:
            wins = dialogs(exclude=answered)
            if not wins:
                if time.monotonic() > deadline:
                    print(json.dumps({"error": "timeout", "waited_s": round(time.monotonic() - T0, 3)}), flush=True)
                    return 1
                time.sleep(0.03)
        win = wins[-1]
        t_seen = time.monotonic() - T0
        title = xdo("getwindowname", win, check=False)
        w, h = geometry(win) or (0, 0)
        # Unlock dialog: 178 px high with the check box row, ~138 px without (Adwaita, 96 dpi).
        has_choice = title.startswith("Unlock") and h >= 160
        time.sleep(a.settle)  # let GTK finish mapping/focusing the entry
        xdo("windowfocus", "--sync", win)
        confirm = a.confirm == "yes" or (a.confirm == "auto" and title == "")
        if a.dismiss:
            xdo("key", "Escape")
            action = "escape"
        else:
            type_text(password)
            if confirm:
                xdo("key", "Tab")
                type_text(password)
            if a.choice == "toggle" and has_choice:
                xdo("key", "Tab", "space", "Tab", "Tab")  # entry -> check box (toggle) -> Cancel -> Unlock
                final = "Return"                            # Return on the focused Unlock button
                action = "password+toggle+unlock"
            else:
                final = "Return"                            # Return in the entry activates the default button
                action = "password+return" + ("(confirm)" if confirm else "")
            xdo("key", final)
        t_answered = time.monotonic() - T0
        gone = False
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if not visible(win):
                gone = True
                break
            time.sleep(0.03)
        t_gone = time.monotonic() - T0
        answered.append(win)
        print(json.dumps({
            "window": win, "title": title, "geometry": f"{w}x{h}", "new_password": confirm, "has_choice": has_choice,
            "action": action, "visible_after_s": round(t_seen, 3), "answered_after_s": round(t_answered, 3),
            "gone_after_s": round(t_gone, 3) if gone else None, "gone": gone,
            # the same instants on CLOCK_MONOTONIC (comparable with time.monotonic() of other processes)
            "mono": {"start": round(T0, 4), "visible": round(T0 + t_seen, 4), "answered": round(T0 + t_answered, 4),
                     "gone": round(T0 + t_gone, 4) if gone else None},
        }), flush=True)
        if not gone:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
