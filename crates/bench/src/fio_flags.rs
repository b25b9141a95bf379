//! fio's command-line spellings that are not a flag of the option table:
//! the options an fio job file takes whose value is another option's in
//! another form (`--rwmixwrite=30` is `--rwmixread=70`, `--buffered=0` is
//! `--direct=1`). fio's names that are one option's other spelling
//! (`--norandommap`, `--randseed`, `--ioengine`) are the table's aliases;
//! these are translated here, so `storlab bench` takes what `fio` takes.

use crate::options::SpecError;

/// One fio spelling translated into an option of the table.
#[derive(Debug, Clone, Copy)]
pub struct FioFlag {
    /// fio's name (also accepted with dashes).
    pub name: &'static str,
    /// A yes/no option whose value may be left out (`--buffered`).
    pub optional_value: bool,
    pub value_name: &'static str,
    pub help: &'static str,
}

/// The translated spellings.
pub const FIO_FLAGS: &[FioFlag] = &[
    FioFlag {
        name: "rwmixwrite",
        optional_value: false,
        value_name: "PCT",
        help: "fio's rwmixwrite: the percentage of writes (same as --rwmixread 100-PCT)",
    },
    FioFlag {
        name: "buffered",
        optional_value: true,
        value_name: "0|1",
        help: "fio's buffered: --buffered=0 is --direct=1, --buffered is --direct=0",
    },
    FioFlag {
        name: "log_avg_msec",
        optional_value: false,
        value_name: "MS",
        help: "fio's log_avg_msec: the interval of the series kept in the result, in ms (same as --log-interval MSms)",
    },
    FioFlag {
        name: "buffer_compress_percentage",
        optional_value: false,
        value_name: "PCT",
        help: "fio's buffer_compress_percentage (same as --buffer-pattern compressible:PCT)",
    },
];

/// The option key and value an fio spelling stands for, or why its value
/// is refused (naming the flag).
pub fn translate_fio_flag(name: &str, value: &str) -> Result<(&'static str, String), SpecError> {
    let pct = |what: &str| -> Result<u32, SpecError> {
        value
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|v| *v <= 100)
            .ok_or_else(|| {
                SpecError(format!(
                    "invalid value '{value}' for --{name}: {what} from 0 to 100"
                ))
            })
    };
    Ok(match name {
        "rwmixwrite" => ("rwmixread", (100 - pct("a percentage")?).to_string()),
        "buffered" => {
            let on = crate::Flag::parse(value).ok_or_else(|| {
                SpecError(format!(
                    "invalid value '{value}' for --buffered: use 1 or 0"
                ))
            })?;
            ("direct", u8::from(!on.0).to_string())
        }
        "log_avg_msec" => {
            let ms: u64 = value.trim().parse().map_err(|_| {
                SpecError(format!(
                    "invalid value '{value}' for --log_avg_msec: a whole number of milliseconds"
                ))
            })?;
            ("log_interval", format!("{ms}ms"))
        }
        "buffer_compress_percentage" => (
            "buffer_pattern",
            format!("compressible:{}", pct("a percentage")?),
        ),
        other => {
            return Err(SpecError(format!(
                "--{other} is not an fio spelling storlab translates"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each spelling means what the same line means in an fio job file.
    #[test]
    fn each_spelling_means_what_the_job_file_line_means() {
        for (name, value) in [
            ("rwmixwrite", "30"),
            ("buffered", "0"),
            ("buffered", "1"),
            ("log_avg_msec", "500"),
            ("buffer_compress_percentage", "40"),
        ] {
            assert!(FIO_FLAGS.iter().any(|f| f.name == name));
            let (key, v) = translate_fio_flag(name, value).unwrap();
            let flags = crate::spec_from_pairs([(key, v.as_str()), ("rw", "randrw")]).unwrap();
            let text = format!("[j]\nrw=randrw\n{name}={value}\n");
            let job = crate::FioJobFile::parse(&text, "j.fio").unwrap();
            let file = crate::resolve_phase(&job.phases[0], 0).unwrap();
            let cli = crate::resolve_phase(&job.phases[0].overlay(&flags), 0).unwrap();
            assert_eq!(cli, file, "--{name}={value}");
        }
        let e = translate_fio_flag("rwmixwrite", "130")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--rwmixwrite"), "{e}");
    }
}
