/**
 * `uplink tmux-snippet`: a tmux config fragment for the user to source themselves (Uplink never
 * edits tmux config). It shows each pane's tier and read block in its border, and binds
 * `prefix + g` to a grant menu that sets the human-only pane options the driver obeys.
 */

/** The fragment, ready to print. */
export function tmuxSnippet(): string {
  return `# Uplink: pane tiers in the border and a human grant menu (prefix + g).
# Save and source it from ~/.tmux.conf:
#   uplink tmux-snippet > ~/.config/tmux/uplink.tmux
#   source-file ~/.config/tmux/uplink.tmux
# Needs tmux >= 3.0 (display-menu). Uplink never edits your tmux config.
#
# Grants are human-only: agents cannot set these options through Uplink. The menu acts on the
# focused pane, so it works even when the pane runs a raw console with no shell to type into.

bind-key g display-menu -T "#[align=centre]uplink grant: #{pane_id}#{?#{@name}, (#{@name}),}" \\
  "observer (read only)"        o "set-option -p @uplink_profile observer" \\
  "operator (send, type, keys)" p "set-option -p @uplink_profile operator" \\
  "godmode (C-c and chords)"    G "set-option -p @uplink_profile godmode" \\
  "revoke (config decides)"     r "set-option -pu @uplink_profile" \\
  "" \\
  "block reading"               x "set-option -p @uplink_read off" \\
  "allow reading"               X "set-option -pu @uplink_read"

# A grant you did not make is conspicuous: every pane border shows its tier and read block.
# [config]: no pane grant, so Uplink's config decides (observer unless a tmux.write_allow glob matches).
set -g pane-border-status top
set -g pane-border-format " #{?#{@uplink_profile},#[fg=yellow bold][#{@uplink_profile}]#[default] ,#[dim][config]#[default] }#{?#{==:#{@uplink_read},off},#[fg=red][no-read]#[default] ,}#{pane_id}#{?#{@name}, #{@name},}: #{pane_current_command} "
`;
}
