// One clock for two Players: the compare view plays both captures on a
// shared timeline (capture time), so the same moment of each is on screen
// together. Playback advances the shared time with real timing (idle gaps
// longer than the cap shortened, the cap applied to the union of both
// sides' event times so neither drifts) and seeks a side only when one of
// its own observations falls due, so each Player's keyframe seek does the
// drawing and nothing replays from zero.

import type { Player } from './player';
import { eventTimes, lastAtOrBefore, TimeMap } from './timeline';

export type ClockState = 'paused' | 'playing' | 'ended';

interface Side {
  player: Player;
  times: number[]; // sorted event times of the side
  shown: number; // index of the last event time applied
}

export class SyncClock {
  private sides: Side[] = [];
  private map: TimeMap = new TimeMap([], 0, null);
  private t = 0;
  private playAt = 0;
  private rate = 1;
  private cap: number | null = 2000;
  private raf = 0;
  private last = 0;
  private st: ClockState = 'paused';
  private readonly timeListeners = new Set<(ms: number) => void>();
  private readonly stateListeners = new Set<(s: ClockState) => void>();
  private readonly frameListeners = new Set<() => void>();

  /** Attaches the loaded players (left, right) and resets to time 0. */
  attach(players: Player[]): void {
    this.pause();
    this.sides = players.map((player) => {
      const tl = player.timeline;
      const times = tl ? [...new Set(eventTimes(tl))].sort((a, b) => a - b) : [];
      return { player, times, shown: -2 };
    });
    this.rebuild();
    this.t = 0;
    this.playAt = 0;
  }

  get duration(): number {
    return Math.max(0, ...this.sides.map((s) => s.player.duration));
  }

  get time(): number {
    return this.t;
  }

  get state(): ClockState {
    return this.st;
  }

  get speed(): number {
    return this.rate;
  }

  setSpeed(x: number): void {
    this.rate = Math.max(0.5, Math.min(8, Number.isFinite(x) ? x : 1));
  }

  setIdleCap(ms: number | null): void {
    this.cap = ms !== null && ms > 0 ? ms : null;
    this.rebuild();
    this.playAt = this.map.toPlay(this.t);
  }

  /** Shows both sides at time ms (each side may be given its own time:
   * a divergence happens at left_at_ms on the left and right_at_ms on the
   * right). Resolves once both screens are drawn. */
  async seek(ms: number, perSide?: number[]): Promise<void> {
    const d = this.duration;
    this.t = Math.max(0, Math.min(d, Number.isFinite(ms) ? ms : 0));
    this.playAt = this.map.toPlay(this.t);
    if (this.st === 'ended' && this.t < d) this.setState('paused');
    this.emitTime();
    await Promise.all(
      this.sides.map((s, i) => {
        const at = perSide?.[i] ?? this.t;
        s.shown = lastAtOrBefore(s.times, at, (x) => x);
        return s.player.seek(at);
      }),
    );
    await Promise.all(this.sides.map((s) => s.player.settled()));
    this.frameListeners.forEach((cb) => cb());
  }

  play(): void {
    if (this.st === 'playing' || this.sides.length === 0) return;
    if (this.t >= this.duration) void this.seek(0);
    this.setState('playing');
    this.last = performance.now();
    this.raf = requestAnimationFrame(this.tick);
  }

  pause(): void {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    if (this.st === 'playing') this.setState('paused');
  }

  toggle(): void {
    if (this.st === 'playing') this.pause();
    else this.play();
  }

  onTime(cb: (ms: number) => void): () => void {
    this.timeListeners.add(cb);
    return () => this.timeListeners.delete(cb);
  }

  onState(cb: (s: ClockState) => void): () => void {
    this.stateListeners.add(cb);
    return () => this.stateListeners.delete(cb);
  }

  /** Called after both screens changed and were drawn. */
  onFrame(cb: () => void): () => void {
    this.frameListeners.add(cb);
    return () => this.frameListeners.delete(cb);
  }

  dispose(): void {
    this.pause();
    this.timeListeners.clear();
    this.stateListeners.clear();
    this.frameListeners.clear();
    this.sides = [];
  }

  private rebuild(): void {
    const all = this.sides.flatMap((s) => s.times);
    this.map = new TimeMap(all, this.duration, this.cap);
  }

  private readonly tick = (now: number): void => {
    this.raf = 0;
    if (this.st !== 'playing') return;
    const dt = Math.max(0, Math.min(250, now - this.last));
    this.last = now;
    this.playAt = Math.min(this.map.playDuration, this.playAt + dt * this.rate);
    this.t = this.map.toCapture(this.playAt);
    const due: Promise<void>[] = [];
    for (const s of this.sides) {
      const k = lastAtOrBefore(s.times, this.t, (x) => x);
      if (k !== s.shown) {
        s.shown = k;
        due.push(s.player.seek(Math.min(this.t, s.player.duration)));
      }
    }
    if (due.length) void Promise.all(due).then(() => this.frameListeners.forEach((cb) => cb()));
    this.emitTime();
    if (this.playAt >= this.map.playDuration) {
      this.t = this.duration;
      this.setState('ended');
      this.emitTime();
      return;
    }
    this.raf = requestAnimationFrame(this.tick);
  };

  private setState(s: ClockState): void {
    if (s === this.st) return;
    this.st = s;
    this.stateListeners.forEach((cb) => cb(s));
  }

  private emitTime(): void {
    this.timeListeners.forEach((cb) => cb(this.t));
  }
}
