//! PodLogOptions (core/v1): what a request for a container's log asks for — the query of
//! `GET pods/NAME/log` that `kubectl logs` sends (`previous`, `timestamps`, `sinceSeconds`,
//! `sinceTime`, `tailLines`, `limitBytes`). The kubelet answers it (kubesim-kubelet `logs`).

use crate::Millis;

/// The options of one log request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodLogOptions {
    /// The previous terminated attempt of the container.
    pub previous: bool,
    /// Each line prefixed with the time the runtime recorded it (RFC3339 with nanoseconds).
    pub timestamps: bool,
    /// Only lines written in the last this many seconds.
    pub since_seconds: Option<i64>,
    /// Only lines written at or after this virtual instant (`sinceTime`).
    pub since_time: Option<Millis>,
    /// Only the last this many lines.
    pub tail_lines: Option<usize>,
    /// At most this many bytes of output.
    pub limit_bytes: Option<usize>,
}

impl PodLogOptions {
    /// The options of a plain request (`previous` as given, everything else unset).
    pub fn previous(previous: bool) -> PodLogOptions {
        PodLogOptions { previous, ..PodLogOptions::default() }
    }
}
