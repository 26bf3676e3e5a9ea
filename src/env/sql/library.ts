/** The library database (authors, books, members, loans) and its question templates. */
import { createRng } from "../rng.js";
import { ask, type DatabaseContent, type DatabaseSpec } from "./catalog.js";
import { BOOK_GENRES, CITIES, COUNTRIES, TITLE_ADJECTIVES, TITLE_NOUNS } from "./data.js";
import {
  addDays,
  clearTop,
  drawDistinct,
  drawNames,
  MONTH_NAMES,
  monthCode,
  spread,
  sqlText,
  tally,
} from "./records.js";

const LIBRARY_STREAM = 0x6c696272;

const AUTHORS = `CREATE TABLE authors (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  country TEXT NOT NULL,
  birth_year INTEGER NOT NULL
)`;

const BOOKS = `CREATE TABLE books (
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  author_id INTEGER NOT NULL REFERENCES authors(id),
  genre TEXT NOT NULL, -- e.g. 'fantasy', 'mystery', 'science fiction'
  published_year INTEGER NOT NULL,
  pages INTEGER NOT NULL
)`;

const MEMBERS = `CREATE TABLE members (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT NOT NULL,
  joined_date TEXT NOT NULL -- YYYY-MM-DD
)`;

const LOANS = `CREATE TABLE loans (
  id INTEGER PRIMARY KEY,
  book_id INTEGER NOT NULL REFERENCES books(id),
  member_id INTEGER NOT NULL REFERENCES members(id),
  loan_date TEXT NOT NULL, -- YYYY-MM-DD, all in 2024
  return_date TEXT -- YYYY-MM-DD, NULL while the book is still out
)`;

type Author = { id: number; name: string; country: string; birth_year: number };
type Book = {
  id: number;
  title: string;
  author_id: number;
  genre: string;
  published_year: number;
  pages: number;
};
type Member = { id: number; name: string; city: string; joined_date: string };
type Loan = {
  id: number;
  book_id: number;
  member_id: number;
  loan_date: string;
  return_date: string | null;
};

interface LibraryRecords {
  authors: Author[];
  books: Book[];
  members: Member[];
  loans: Loan[];
}

const MEMBER_CITIES = CITIES.slice(0, 8);

function generateRecords(): LibraryRecords {
  const rng = createRng(LIBRARY_STREAM);
  const people = drawNames(rng, 40 + 70);
  const authors = people.slice(0, 40).map((name, i) => ({
    id: i + 1,
    name,
    country: rng.pick(COUNTRIES),
    birth_year: 1920 + rng.int(71),
  }));
  const titles = rng
    .shuffle(TITLE_ADJECTIVES.flatMap((adj) => TITLE_NOUNS.map((noun) => `The ${adj} ${noun}`)))
    .slice(0, 160);
  const pageCounts = new Set<number>();
  const books = titles.map((title, i) => ({
    id: i + 1,
    title,
    // Every author has at least one book; the rest are spread at random.
    author_id: i < authors.length ? i + 1 : 1 + rng.int(authors.length),
    genre: rng.pick(BOOK_GENRES),
    published_year: 1950 + rng.int(74),
    pages: drawDistinct(pageCounts, () => 90 + rng.int(811)),
  }));
  const members = people.slice(40).map((name, i) => ({
    id: i + 1,
    name,
    city: rng.pick(MEMBER_CITIES),
    joined_date: addDays("2019-01-01", rng.int(1800)),
  }));
  const loans = Array.from({ length: 450 }, (_, i) => {
    const loanDate = addDays("2024-01-01", rng.int(366));
    return {
      id: i + 1,
      // Popular books: a skewed pick so some books are borrowed far more than others.
      book_id: 1 + Math.floor(rng.next() ** 1.6 * books.length),
      member_id: 1 + rng.int(members.length),
      loan_date: loanDate,
      return_date: rng.next() < 0.15 ? null : addDays(loanDate, 3 + rng.int(38)),
    };
  });
  return { authors, books, members, loans };
}

const MONTHS = Array.from({ length: 12 }, (_, i) => i + 1);

function questions(records: LibraryRecords) {
  const { authors, books, members, loans } = records;
  const bookById = new Map(books.map((b) => [b.id, b]));
  const authorById = new Map(authors.map((a) => [a.id, a]));
  const memberById = new Map(members.map((m) => [m.id, m]));
  const bookOf = (loan: Loan) => bookById.get(loan.book_id) as Book;
  const authorOf = (book: Book) => authorById.get(book.author_id) as Author;
  const loansPerBook = tally(loans, (loan) => loan.book_id);
  const booksPerAuthor = tally(books, (b) => b.author_id);
  const countries = COUNTRIES.filter((c) => authors.some((a) => a.country === c));
  const borrowers = members.filter((m) =>
    loans.some((l) => l.member_id === m.id && l.return_date === null),
  );

  return [
    ask(
      "library.books-by-author",
      spread(
        authors.map((a) => a.name),
        14,
      ),
      [
        (name) => `List the titles of the books written by ${name}.`,
        (name) => `Which books in the library are by the author ${name}? Give their titles.`,
      ],
      (name) =>
        "SELECT b.title FROM books b JOIN authors a ON a.id = b.author_id " +
        `WHERE a.name = ${sqlText(name)}`,
    ),
    ask(
      "library.genre-after-year",
      spread(
        BOOK_GENRES.flatMap((genre) => [1980, 2000].map((year) => ({ genre, year }))).filter(
          ({ genre, year }) => books.some((b) => b.genre === genre && b.published_year > year),
        ),
        14,
      ),
      [
        ({ genre, year }) => `How many ${genre} books were published after ${year}?`,
        ({ genre, year }) =>
          `Count the books of genre '${genre}' with a publication year later than ${year}.`,
      ],
      ({ genre, year }) =>
        `SELECT COUNT(*) FROM books WHERE genre = ${sqlText(genre)} AND published_year > ${year}`,
    ),
    ask(
      "library.authors-from-country",
      countries,
      [
        (country) => `How many authors are from ${country}?`,
        (country) => `Count the authors whose country is '${country}'.`,
      ],
      (country) => `SELECT COUNT(*) FROM authors WHERE country = ${sqlText(country)}`,
    ),
    ask(
      "library.books-on-loan",
      spread(
        borrowers.map((m) => m.name),
        12,
      ),
      [
        (name) =>
          `Which books does ${name} currently have on loan (borrowed and not yet returned)? ` +
          "Give the titles.",
        (name) => `List the titles of the books borrowed by ${name} that have no return date.`,
      ],
      (name) =>
        "SELECT b.title FROM loans l JOIN books b ON b.id = l.book_id " +
        `JOIN members m ON m.id = l.member_id WHERE m.name = ${sqlText(name)} ` +
        "AND l.return_date IS NULL",
    ),
    ask(
      "library.loans-in-month",
      MONTHS,
      [
        (m) => `How many loans started in ${MONTH_NAMES[m - 1]} 2024?`,
        (m) => `Count the loans whose loan date falls in ${MONTH_NAMES[m - 1]} 2024.`,
      ],
      (m) => `SELECT COUNT(*) FROM loans WHERE loan_date LIKE '2024-${monthCode(m)}-%'`,
    ),
    ask(
      "library.most-borrowed-in-genre",
      BOOK_GENRES.filter((genre) =>
        clearTop(
          books.filter((b) => b.genre === genre).map((b) => loansPerBook.get(b.id) ?? 0),
          1,
        ),
      ),
      [
        (genre) =>
          `Which ${genre} book was borrowed the most times? Give its title and the number of ` +
          "loans.",
        (genre) =>
          `Find the book of genre '${genre}' with the most loans, with its title and loan count.`,
      ],
      (genre) =>
        "SELECT b.title, COUNT(*) AS loans FROM books b JOIN loans l ON l.book_id = b.id " +
        `WHERE b.genre = ${sqlText(genre)} GROUP BY b.id ORDER BY loans DESC LIMIT 1`,
    ),
    ask(
      "library.longest-book-by-country",
      countries,
      [
        (country) =>
          `What is the longest book (most pages) by an author from ${country}? Give its title ` +
          "and number of pages.",
        (country) =>
          `Among books whose author's country is '${country}', which has the most pages? ` +
          "Give the title and the page count.",
      ],
      (country) =>
        "SELECT b.title, b.pages FROM books b JOIN authors a ON a.id = b.author_id " +
        `WHERE a.country = ${sqlText(country)} ORDER BY b.pages DESC LIMIT 1`,
    ),
    ask(
      "library.loans-by-city",
      MEMBER_CITIES.filter((city) => loans.some((l) => memberById.get(l.member_id)?.city === city)),
      [
        (city) => `How many loans were made by members who live in ${city}?`,
        (city) => `Count the loans of all members whose city is '${city}'.`,
      ],
      (city) =>
        "SELECT COUNT(*) FROM loans l JOIN members m ON m.id = l.member_id " +
        `WHERE m.city = ${sqlText(city)}`,
    ),
    ask(
      "library.prolific-authors",
      [3, 4, 5, 6].filter((n) => {
        const over = [...booksPerAuthor.values()].filter((count) => count > n).length;
        return over > 0 && over < authors.length / 2;
      }),
      [
        (n) => `Which authors have more than ${n} books in the library? List their names.`,
        (n) => `Give the names of the authors with over ${n} books in the books table.`,
      ],
      (n) =>
        "SELECT a.name FROM authors a JOIN books b ON b.author_id = a.id " +
        `GROUP BY a.id HAVING COUNT(*) > ${n}`,
    ),
    ask(
      "library.average-pages",
      BOOK_GENRES.filter((genre) => books.some((b) => b.genre === genre)),
      [
        (genre) => `What is the average number of pages of ${genre} books?`,
        (genre) => `Compute the mean page count of the books of genre '${genre}'.`,
      ],
      (genre) => `SELECT AVG(pages) FROM books WHERE genre = ${sqlText(genre)}`,
    ),
    ask(
      "library.never-borrowed",
      BOOK_GENRES.filter((genre) =>
        books.some((b) => b.genre === genre && !loansPerBook.has(b.id)),
      ),
      [
        (genre) => `Which ${genre} books have never been borrowed? List their titles.`,
        (genre) => `Give the titles of the '${genre}' books that have no loans at all.`,
      ],
      (genre) =>
        `SELECT title FROM books WHERE genre = ${sqlText(genre)} ` +
        "AND id NOT IN (SELECT book_id FROM loans)",
    ),
    ask(
      "library.oldest-in-genre",
      BOOK_GENRES.flatMap((genre) => [2, 3].map((k) => ({ genre, k }))).filter(({ genre, k }) =>
        clearTop(
          books.filter((b) => b.genre === genre).map((b) => b.published_year),
          k,
          false,
        ),
      ),
      [
        ({ genre, k }) =>
          `List the title and publication year of the ${k} oldest ${genre} books, oldest first.`,
        ({ genre, k }) =>
          `Give the ${k} '${genre}' books with the earliest publication years: title and year, ` +
          "in ascending order of year.",
      ],
      ({ genre, k }) =>
        `SELECT title, published_year FROM books WHERE genre = ${sqlText(genre)} ` +
        `ORDER BY published_year LIMIT ${k}`,
    ),
    ask(
      "library.loan-length",
      BOOK_GENRES.filter((genre) =>
        loans.some((l) => l.return_date !== null && bookOf(l).genre === genre),
      ),
      [
        (genre) =>
          `On average, how many days were returned loans of ${genre} books out for (return ` +
          "date minus loan date)?",
        (genre) =>
          `Compute the mean number of days between loan date and return date over the ` +
          `returned loans of '${genre}' books.`,
      ],
      (genre) =>
        "SELECT AVG(julianday(l.return_date) - julianday(l.loan_date)) FROM loans l " +
        `JOIN books b ON b.id = l.book_id WHERE b.genre = ${sqlText(genre)} ` +
        "AND l.return_date IS NOT NULL",
    ),
    ask(
      "library.readers-of-author",
      spread(
        authors
          .filter((a) => loans.some((l) => authorOf(bookOf(l)).id === a.id))
          .map((a) => a.name)
          .reverse(),
        12,
      ),
      [
        (name) =>
          `Which members have borrowed at least one book by ${name}? List each member's name ` +
          "once.",
        (name) =>
          `Give the distinct names of the members with a loan of any book written by ${name}.`,
      ],
      (name) =>
        "SELECT DISTINCT m.name FROM members m JOIN loans l ON l.member_id = m.id " +
        "JOIN books b ON b.id = l.book_id JOIN authors a ON a.id = b.author_id " +
        `WHERE a.name = ${sqlText(name)}`,
    ),
  ].flat();
}

export const libraryDatabase: DatabaseSpec = {
  name: "library",
  description: "a public library: authors, books, members and loans",
  generate(): DatabaseContent {
    const records = generateRecords();
    return {
      tables: [
        { name: "authors", ddl: AUTHORS, rows: records.authors },
        { name: "books", ddl: BOOKS, rows: records.books },
        { name: "members", ddl: MEMBERS, rows: records.members },
        { name: "loans", ddl: LOANS, rows: records.loans },
      ],
      questions: questions(records),
    };
  },
};
