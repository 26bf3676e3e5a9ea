/** The flights database (airports, airlines, flights, bookings) and its question templates. */
import { createRng } from "../rng.js";
import { ask, type DatabaseContent, type DatabaseSpec } from "./catalog.js";
import { AIRLINES, AIRPORTS } from "./data.js";
import {
  addDays,
  clearTop,
  drawDistinct,
  drawNames,
  MONTH_NAMES,
  monthCode,
  roundCents,
  spread,
  sqlText,
  tally,
} from "./records.js";

const FLIGHTS_STREAM = 0x666c6967;

const AIRPORTS_DDL = `CREATE TABLE airports (
  code TEXT PRIMARY KEY, -- IATA code, e.g. 'LIS'
  city TEXT NOT NULL,
  country TEXT NOT NULL
)`;

const AIRLINES_DDL = `CREATE TABLE airlines (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT NOT NULL
)`;

const FLIGHTS_DDL = `CREATE TABLE flights (
  id INTEGER PRIMARY KEY,
  flight_no TEXT NOT NULL UNIQUE, -- e.g. 'AU1234'
  airline_id INTEGER NOT NULL REFERENCES airlines(id),
  origin TEXT NOT NULL REFERENCES airports(code),
  destination TEXT NOT NULL REFERENCES airports(code),
  departure TEXT NOT NULL, -- 'YYYY-MM-DD HH:MM', May to September 2024
  duration_min INTEGER NOT NULL,
  base_price REAL NOT NULL -- economy fare in euros
)`;

const BOOKINGS_DDL = `CREATE TABLE bookings (
  id INTEGER PRIMARY KEY,
  flight_id INTEGER NOT NULL REFERENCES flights(id),
  passenger_name TEXT NOT NULL,
  class TEXT NOT NULL, -- 'economy', 'premium' or 'business'
  price_paid REAL NOT NULL -- euros
)`;

type Airport = { code: string; city: string; country: string };
type Airline = { id: number; name: string; country: string };
type Flight = {
  id: number;
  flight_no: string;
  airline_id: number;
  origin: string;
  destination: string;
  departure: string;
  duration_min: number;
  base_price: number;
};
type Booking = {
  id: number;
  flight_id: number;
  passenger_name: string;
  class: string;
  price_paid: number;
};

interface FlightRecords {
  airports: Airport[];
  airlines: Airline[];
  flights: Flight[];
  bookings: Booking[];
}

const CLASS_FACTORS: Record<string, number> = { economy: 1, premium: 1.6, business: 3.2 };

function generateRecords(): FlightRecords {
  const rng = createRng(FLIGHTS_STREAM);
  const airports = AIRPORTS.map(([code, city, country]) => ({ code, city, country }));
  const airlines = AIRLINES.map(([name, , country], i) => ({ id: i + 1, name, country }));
  // Each airline flies a handful of routes, each route with its own typical duration.
  const routes = airlines.flatMap((airline) =>
    Array.from({ length: 8 }, () => {
      const [from, to] = rng.shuffle(airports);
      return {
        airline,
        origin: (from as Airport).code,
        destination: (to as Airport).code,
        minutes: 60 + 5 * rng.int(45),
      };
    }),
  );
  const numbers = new Set<number>();
  const prices = new Set<number>();
  const flights = Array.from({ length: 240 }, (_, i) => {
    const route = rng.pick(routes);
    const prefix = AIRLINES[route.airline.id - 1]?.[1] ?? "XX";
    const day = addDays("2024-05-01", rng.int(153));
    const hour = String(5 + rng.int(18)).padStart(2, "0");
    const time = `${hour}:${rng.pick(["00", "15", "30", "45"])}`;
    return {
      id: i + 1,
      flight_no: `${prefix}${drawDistinct(numbers, () => 100 + rng.int(9900))}`,
      airline_id: route.airline.id,
      origin: route.origin,
      destination: route.destination,
      departure: `${day} ${time}`,
      duration_min: route.minutes + 5 * rng.int(4),
      base_price: drawDistinct(prices, () => roundCents(39 + rng.next() * 380)),
    };
  });
  const passengers = drawNames(rng, 300);
  const bookings = Array.from({ length: 700 }, (_, i) => {
    const flight = rng.pick(flights);
    const r = rng.next();
    const seatClass = r < 0.7 ? "economy" : r < 0.85 ? "premium" : "business";
    const factor = (CLASS_FACTORS[seatClass] ?? 1) * (0.85 + rng.next() * 0.4);
    return {
      id: i + 1,
      flight_id: flight.id,
      passenger_name: rng.pick(passengers),
      class: seatClass,
      price_paid: roundCents(flight.base_price * factor),
    };
  });
  return { airports, airlines, flights, bookings };
}

const MONTHS = [5, 6, 7, 8, 9];
const CLASSES = ["economy", "premium", "business"];

function questions(records: FlightRecords) {
  const { airports, airlines, flights, bookings } = records;
  const airportByCode = new Map(airports.map((a) => [a.code, a]));
  const flightById = new Map(flights.map((f) => [f.id, f]));
  const cityOf = (code: string) => airportByCode.get(code)?.city ?? code;
  const flightOf = (b: Booking) => flightById.get(b.flight_id) as Flight;
  const monthOf = (f: Flight) => Number(f.departure.slice(5, 7));
  const routeKeys = [...new Set(flights.map((f) => `${f.origin}-${f.destination}`))].sort();
  const routeList = routeKeys.map((key) => {
    const [origin = "", destination = ""] = key.split("-");
    return {
      origin,
      destination,
      flights: flights.filter((f) => f.origin === origin && f.destination === destination),
    };
  });
  const cities = airports.map((a) => a.city);
  const booked = flights.filter((f) => bookings.some((b) => b.flight_id === f.id));
  const route = (origin: string, destination: string) =>
    `${cityOf(origin)} (${origin}) to ${cityOf(destination)} (${destination})`;
  const departuresPerAirport = tally(flights, (f) => f.origin);

  return [
    ask(
      "flights.flights-between-cities",
      spread(routeList, 16),
      [
        ({ origin, destination }) =>
          `How many flights go from ${cityOf(origin)} to ${cityOf(destination)}?`,
        ({ origin, destination }) =>
          `Count the flights whose origin airport is in ${cityOf(origin)} and whose ` +
          `destination airport is in ${cityOf(destination)}.`,
      ],
      ({ origin, destination }) =>
        "SELECT COUNT(*) FROM flights f JOIN airports o ON o.code = f.origin " +
        "JOIN airports d ON d.code = f.destination " +
        `WHERE o.city = ${sqlText(cityOf(origin))} AND d.city = ${sqlText(cityOf(destination))}`,
    ),
    ask(
      "flights.airline-departures",
      spread(
        airlines
          .flatMap((airline) => airports.map((airport) => ({ airline, airport })))
          .filter(({ airline, airport }) =>
            flights.some((f) => f.airline_id === airline.id && f.origin === airport.code),
          ),
        16,
      ),
      [
        ({ airline, airport }) => `How many ${airline.name} flights depart from ${airport.city}?`,
        ({ airline, airport }) =>
          `Count the flights of the airline '${airline.name}' leaving from the airport of ` +
          `${airport.city}.`,
      ],
      ({ airline, airport }) =>
        "SELECT COUNT(*) FROM flights f JOIN airlines a ON a.id = f.airline_id " +
        "JOIN airports p ON p.code = f.origin " +
        `WHERE a.name = ${sqlText(airline.name)} AND p.city = ${sqlText(airport.city)}`,
    ),
    ask(
      "flights.cheapest-on-route",
      spread(
        routeList.filter((r) => r.flights.length >= 2),
        14,
      ),
      [
        ({ origin, destination }) =>
          `What is the cheapest flight from ${route(origin, destination)} by base price? Give ` +
          "its flight number and base price.",
        ({ origin, destination }) =>
          `Find the flight from airport ${origin} to airport ${destination} with the lowest ` +
          "base price, and give its flight_no and base_price.",
      ],
      ({ origin, destination }) =>
        "SELECT flight_no, base_price FROM flights " +
        `WHERE origin = '${origin}' AND destination = '${destination}' ` +
        "ORDER BY base_price LIMIT 1",
    ),
    ask(
      "flights.average-duration",
      airlines.map((a) => a.name),
      [
        (name) => `What is the average duration, in minutes, of ${name} flights?`,
        (name) => `Compute the mean duration_min over all flights of the airline '${name}'.`,
      ],
      (name) =>
        "SELECT AVG(f.duration_min) FROM flights f JOIN airlines a ON a.id = f.airline_id " +
        `WHERE a.name = ${sqlText(name)}`,
    ),
    ask(
      "flights.class-bookings",
      spread(
        booked
          .flatMap((flight) => CLASSES.map((seatClass) => ({ flight, seatClass })))
          .filter(({ flight, seatClass }) =>
            bookings.some((b) => b.flight_id === flight.id && b.class === seatClass),
          ),
        14,
      ),
      [
        ({ flight, seatClass }) =>
          `How many ${seatClass} bookings are there on flight ${flight.flight_no}?`,
        ({ flight, seatClass }) =>
          `Count the bookings in class '${seatClass}' for the flight numbered ` +
          `${flight.flight_no}.`,
      ],
      ({ flight, seatClass }) =>
        "SELECT COUNT(*) FROM bookings b JOIN flights f ON f.id = b.flight_id " +
        `WHERE f.flight_no = '${flight.flight_no}' AND b.class = '${seatClass}'`,
    ),
    ask(
      "flights.airline-revenue-in-month",
      spread(
        airlines
          .flatMap((airline) =>
            MONTHS.map((month) => ({ airline: airline.name, id: airline.id, month })),
          )
          .filter(({ id, month }) =>
            bookings.some((b) => flightOf(b).airline_id === id && monthOf(flightOf(b)) === month),
          ),
        16,
      ),
      [
        ({ airline, month }) =>
          `How much did passengers pay in total for bookings on ${airline} flights departing ` +
          `in ${MONTH_NAMES[month - 1]} 2024?`,
        ({ airline, month }) =>
          `Sum price_paid over the bookings of '${airline}' flights whose departure is in ` +
          `${MONTH_NAMES[month - 1]} 2024.`,
      ],
      ({ airline, month }) =>
        "SELECT SUM(b.price_paid) FROM bookings b JOIN flights f ON f.id = b.flight_id " +
        `JOIN airlines a ON a.id = f.airline_id WHERE a.name = ${sqlText(airline)} ` +
        `AND f.departure LIKE '2024-${monthCode(month)}-%'`,
    ),
    ask(
      "flights.destinations-from-city",
      cities.filter((city) => flights.some((f) => cityOf(f.origin) === city)),
      [
        (city) =>
          `Which cities can be reached by a direct flight from ${city}? List each city once.`,
        (city) => `Give the distinct destination cities of the flights departing from ${city}.`,
      ],
      (city) =>
        "SELECT DISTINCT d.city FROM flights f JOIN airports o ON o.code = f.origin " +
        `JOIN airports d ON d.code = f.destination WHERE o.city = ${sqlText(city)}`,
    ),
    ask(
      "flights.long-flights-from-city",
      spread(
        cities
          .flatMap((city) => [3, 4].map((hours) => ({ city, hours })))
          .filter(({ city, hours }) =>
            flights.some((f) => cityOf(f.origin) === city && f.duration_min > hours * 60),
          ),
        12,
      ),
      [
        ({ city, hours }) =>
          `Which flights from ${city} take longer than ${hours} hours? Give their flight numbers.`,
        ({ city, hours }) =>
          `List the flight_no of every flight departing from ${city} with a duration above ` +
          `${hours * 60} minutes.`,
      ],
      ({ city, hours }) =>
        "SELECT f.flight_no FROM flights f JOIN airports o ON o.code = f.origin " +
        `WHERE o.city = ${sqlText(city)} AND f.duration_min > ${hours * 60}`,
    ),
    ask(
      "flights.busiest-airports",
      [2, 3, 4, 5].filter((k) => clearTop([...departuresPerAirport.values()], k)),
      [
        (k) =>
          `Which ${k} airports have the most departing flights? Give each airport code and its ` +
          "number of departures, most first.",
        (k) =>
          `List the top ${k} origin airports by number of flights: code and flight count, in ` +
          "descending order of the count.",
      ],
      (k) =>
        "SELECT origin, COUNT(*) AS departures FROM flights GROUP BY origin " +
        `ORDER BY departures DESC LIMIT ${k}`,
    ),
    ask(
      "flights.business-passengers",
      spread(
        booked.filter((f) => bookings.some((b) => b.flight_id === f.id && b.class === "business")),
        14,
      ),
      [
        (flight) =>
          `List the names of the passengers with a business class booking on flight ` +
          `${flight.flight_no}.`,
        (flight) =>
          `Who booked business class on flight ${flight.flight_no}? Give the passenger names.`,
      ],
      (flight) =>
        "SELECT b.passenger_name FROM bookings b JOIN flights f ON f.id = b.flight_id " +
        `WHERE f.flight_no = '${flight.flight_no}' AND b.class = 'business'`,
    ),
    ask(
      "flights.airlines-to-country",
      [...new Set(airports.map((a) => a.country))].filter((country) =>
        flights.some((f) => airportByCode.get(f.destination)?.country === country),
      ),
      [
        (country) => `Which airlines fly to ${country}? List each airline's name once.`,
        (country) =>
          `Give the distinct names of the airlines with at least one flight whose destination ` +
          `airport is in ${country}.`,
      ],
      (country) =>
        "SELECT DISTINCT a.name FROM airlines a JOIN flights f ON f.airline_id = a.id " +
        `JOIN airports p ON p.code = f.destination WHERE p.country = ${sqlText(country)}`,
    ),
    ask(
      "flights.routes-of-airline",
      airlines.map((a) => a.name),
      [
        (name) =>
          `How many different routes (distinct origin and destination pairs) does ${name} fly?`,
        (name) => `Count the distinct (origin, destination) pairs among the flights of '${name}'.`,
      ],
      (name) =>
        "SELECT COUNT(*) FROM (SELECT DISTINCT f.origin, f.destination FROM flights f " +
        `JOIN airlines a ON a.id = f.airline_id WHERE a.name = ${sqlText(name)})`,
    ),
    ask(
      "flights.flights-on-day",
      spread(
        [...tally(flights, (f) => f.departure.slice(0, 10)).entries()]
          .filter(([, count]) => count >= 2)
          .map(([day]) => day)
          .sort(),
        12,
      ),
      [
        (day) => `How many flights depart on ${day}?`,
        (day) => `Count the flights with a departure date of ${day}.`,
      ],
      (day) => `SELECT COUNT(*) FROM flights WHERE date(departure) = '${day}'`,
    ),
    ask(
      "flights.average-paid-per-class",
      airlines.map((a) => a.name),
      [
        (name) =>
          `For each booking class, what is the average price paid on ${name} flights? Give ` +
          "the class and the average.",
        (name) => `Per class, compute the mean price_paid of the bookings on flights of '${name}'.`,
      ],
      (name) =>
        "SELECT b.class, AVG(b.price_paid) FROM bookings b " +
        "JOIN flights f ON f.id = b.flight_id JOIN airlines a ON a.id = f.airline_id " +
        `WHERE a.name = ${sqlText(name)} GROUP BY b.class`,
    ),
  ].flat();
}

export const flightsDatabase: DatabaseSpec = {
  name: "flights",
  description: "an airline booking system: airports, airlines, flights and passenger bookings",
  generate(): DatabaseContent {
    const records = generateRecords();
    return {
      tables: [
        { name: "airports", ddl: AIRPORTS_DDL, rows: records.airports },
        { name: "airlines", ddl: AIRLINES_DDL, rows: records.airlines },
        { name: "flights", ddl: FLIGHTS_DDL, rows: records.flights },
        { name: "bookings", ddl: BOOKINGS_DDL, rows: records.bookings },
      ],
      questions: questions(records),
    };
  },
};
