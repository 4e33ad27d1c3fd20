/**
 * A desktop window, live: its screenshot refreshed every FRAME_MS while the panel is visible
 * (one request in flight at most, so a slow screenshot lowers the rate instead of piling up), and
 * not at all while the tab or window is hidden.
 */
import { useEffect, useState } from 'react';
import { escapeControl } from '../../shared/escape';
import { windowFrame } from '../actions';

/** 400 ms between frame starts: 2.5 frames a second when a screenshot takes less than that. */
export const FRAME_MS = 400;

const visible = (): boolean => typeof document === 'undefined' || document.visibilityState !== 'hidden';

export function LiveWindow({ channel, className = 'preview-img' }: { channel: string; className?: string }) {
  const [frame, setFrame] = useState<{ image_png?: string; error?: string; warnings?: string[] }>();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async (): Promise<void> => {
      timer = undefined;
      if (stopped || !visible()) return;
      const started = Date.now();
      const next = await windowFrame(channel);
      if (stopped) return;
      setFrame((prev) => (next.image_png || !prev?.image_png ? next : prev));
      timer = setTimeout(() => void tick(), Math.max(0, FRAME_MS - (Date.now() - started)));
    };
    const onVisibility = (): void => {
      if (visible() && timer === undefined) void tick();
    };
    document.addEventListener('visibilitychange', onVisibility);
    void tick();
    return () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [channel]);
  if (!frame) return <p className="muted small">Connecting to the window…</p>;
  if (!frame.image_png) return <p className="muted small">{escapeControl(frame.error ?? 'no image')}</p>;
  return (
    <>
      <img className={className} src={`data:image/png;base64,${frame.image_png}`} alt={`Live view of ${escapeControl(channel)}`} />
      {frame.warnings?.map((w) => (
        <p key={w} className="muted small" role="note">
          ⚠ {escapeControl(w)}
        </p>
      ))}
    </>
  );
}
