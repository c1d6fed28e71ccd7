//! The process's rank in a parallel job, from its launcher's environment: one list of launcher
//! variables serves both the `%rank%` placeholder and the header's [`Rank`].

use krphase_format::Rank;

/// Rank variables of the usual MPI launchers, Slurm and torchrun, first found wins, each with
/// the variable its launcher sets to the job's size beside it.
const LAUNCHERS: [(&str, Option<&str>); 6] = [
    ("OMPI_COMM_WORLD_RANK", Some("OMPI_COMM_WORLD_SIZE")),
    ("PMI_RANK", Some("PMI_SIZE")),
    // PMIx publishes the job size through its API only, not the environment.
    ("PMIX_RANK", None),
    ("MV2_COMM_WORLD_RANK", Some("MV2_COMM_WORLD_SIZE")),
    ("SLURM_PROCID", Some("SLURM_NTASKS")),
    ("RANK", Some("WORLD_SIZE")),
];

/// The first launcher variable set: its name and raw value (what `%rank%` expands to).
pub fn raw(env: &dyn Fn(&str) -> Option<String>) -> Option<(&'static str, String)> {
    LAUNCHERS
        .iter()
        .find_map(|(var, _)| env(var).map(|v| (*var, v)))
}

/// The rank for the header: the first launcher variable set, when it holds a number. A value
/// that is not one (a launcher's own naming) is not recorded rather than guessed at; `%rank%`
/// still expands to it.
pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Option<Rank> {
    let (var, value) = raw(env)?;
    let rank = value.trim().parse().ok()?;
    let size_var = LAUNCHERS.iter().find(|(v, _)| *v == var)?.1;
    let world_size = size_var
        .and_then(env)
        .and_then(|s| s.trim().parse().ok())
        .filter(|&n: &u32| n > rank);
    Some(Rank {
        rank,
        world_size,
        var: var.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_first_launcher_wins_with_its_own_size() {
        let env = env_of(&[
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "8"),
            ("OMPI_COMM_WORLD_RANK", "5"),
            ("OMPI_COMM_WORLD_SIZE", "16"),
        ]);
        let r = from_env(&env).unwrap();
        assert_eq!(
            (r.rank, r.world_size, r.var.as_str()),
            (5, Some(16), "OMPI_COMM_WORLD_RANK")
        );
    }

    #[test]
    fn a_rank_that_is_not_a_number_or_a_size_that_cannot_hold_it_is_not_recorded() {
        assert_eq!(from_env(&env_of(&[("RANK", "worker-a")])), None);
        assert_eq!(raw(&env_of(&[("RANK", "worker-a")])).unwrap().1, "worker-a");
        let r = from_env(&env_of(&[("PMI_RANK", "4"), ("PMI_SIZE", "4")])).unwrap();
        assert_eq!((r.rank, r.world_size), (4, None));
        let r = from_env(&env_of(&[("PMIX_RANK", "2"), ("WORLD_SIZE", "9")])).unwrap();
        assert_eq!((r.rank, r.world_size), (2, None), "another launcher's size");
        assert_eq!(from_env(&env_of(&[])), None);
    }
}
