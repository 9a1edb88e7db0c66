/** A real headless Chromium for page tests: Debian's `chromium`, driven by playwright-core. */
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.KEEL_CHROMIUM ?? CANDIDATES.find((p) => existsSync(p));
  if (!executablePath)
    throw new Error(
      `no Chromium found (looked at ${CANDIDATES.join(", ")}); install Debian's chromium (.ci/run does) or set KEEL_CHROMIUM`,
    );
  return chromium.launch({ executablePath, args: ["--no-sandbox"] });
}
