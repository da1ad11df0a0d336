//! Reading `--to events` back (`--from events`) and converting gives the same
//! bytes as converting the original directly, for every fixture and format.

use crate::common;

use common::{FORMATS, cstream, fixture_args, fixtures, run_fixture};

#[test]
fn every_format_via_events_is_byte_identical() {
    for path in fixtures() {
        let extra = fixture_args(&path);
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let mut ev_args = vec!["--to", "events"];
        ev_args.extend(&extra);
        let events = run_fixture(&path, &["--to", "events"]);
        for (name, args) in FORMATS {
            let direct = run_fixture(&path, args);
            let mut a: Vec<&str> = args.to_vec();
            a.extend(&extra);
            a.extend(["--from", "events"]);
            let via = cstream(&a, &events.stdout);
            assert_eq!(
                via.out(),
                direct.out(),
                "{name} via events differs from direct for {}",
                path.display()
            );
        }
    }
}
