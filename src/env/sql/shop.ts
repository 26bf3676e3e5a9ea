/** The shop database (customers, products, orders, order items) and its question templates. */
import { createRng } from "../rng.js";
import { ask, type DatabaseContent, type DatabaseSpec } from "./catalog.js";
import { CITIES, SHOP_CATEGORIES } from "./data.js";
import {
  addDays,
  clearTop,
  drawDistinct,
  drawNames,
  groupBy,
  MONTH_NAMES,
  monthCode,
  roundCents,
  spread,
  sqlText,
  tally,
} from "./records.js";

const SHOP_STREAM = 0x73686f70;

const CUSTOMERS = `CREATE TABLE customers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  city TEXT NOT NULL,
  signup_date TEXT NOT NULL -- YYYY-MM-DD
)`;

const PRODUCTS = `CREATE TABLE products (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  category TEXT NOT NULL, -- e.g. 'electronics', 'kitchen', 'books'
  price REAL NOT NULL, -- list price in dollars
  stock INTEGER NOT NULL -- units in the warehouse
)`;

const ORDERS = `CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  order_date TEXT NOT NULL, -- YYYY-MM-DD, all in 2024
  status TEXT NOT NULL -- 'delivered', 'shipped', 'pending' or 'cancelled'
)`;

const ORDER_ITEMS = `CREATE TABLE order_items (
  order_id INTEGER NOT NULL REFERENCES orders(id),
  product_id INTEGER NOT NULL REFERENCES products(id),
  quantity INTEGER NOT NULL,
  unit_price REAL NOT NULL, -- price paid per unit (list price, or 10% off)
  PRIMARY KEY (order_id, product_id)
)`;

type Customer = {
  id: number;
  name: string;
  city: string;
  signup_date: string;
};
type Product = {
  id: number;
  name: string;
  category: string;
  price: number;
  stock: number;
};
type Order = {
  id: number;
  customer_id: number;
  order_date: string;
  status: string;
};
type OrderItem = {
  order_id: number;
  product_id: number;
  quantity: number;
  unit_price: number;
};

interface ShopRecords {
  customers: Customer[];
  products: Product[];
  orders: Order[];
  items: OrderItem[];
}

function drawStatus(r: number): string {
  return r < 0.65 ? "delivered" : r < 0.8 ? "shipped" : r < 0.9 ? "pending" : "cancelled";
}

function generateRecords(): ShopRecords {
  const rng = createRng(SHOP_STREAM);
  const customers = drawNames(rng, 80).map((name, i) => ({
    id: i + 1,
    name,
    city: rng.pick(CITIES),
    signup_date: addDays("2023-01-01", rng.int(700)),
  }));
  const prices = new Set<number>();
  const products: Product[] = [];
  for (const { category, low, high, products: names } of SHOP_CATEGORIES) {
    for (const name of names) {
      const price = drawDistinct(prices, () => roundCents(low + rng.next() * (high - low)));
      products.push({ id: products.length + 1, name, category, price, stock: rng.int(120) });
    }
  }
  const orders = Array.from({ length: 320 }, (_, i) => ({
    id: i + 1,
    customer_id: 1 + rng.int(customers.length),
    order_date: addDays("2024-01-01", rng.int(366)),
    status: drawStatus(rng.next()),
  }));
  const items: OrderItem[] = [];
  for (const order of orders) {
    for (const product of rng.shuffle(products).slice(0, 1 + rng.int(4))) {
      const discounted = rng.next() < 0.2;
      items.push({
        order_id: order.id,
        product_id: product.id,
        quantity: 1 + rng.int(5),
        unit_price: discounted ? roundCents(product.price * 0.9) : product.price,
      });
    }
  }
  return { customers, products, orders, items };
}

const CATEGORIES = SHOP_CATEGORIES.map((c) => c.category);
const MONTHS = Array.from({ length: 12 }, (_, i) => i + 1);
const STATUSES = ["delivered", "shipped", "pending", "cancelled"];
const monthName = (month: number) => `${MONTH_NAMES[month - 1]} 2024`;
const inMonth = (column: string, month: number) => `${column} LIKE '2024-${monthCode(month)}-%'`;

function questions(records: ShopRecords) {
  const { customers, products, orders, items } = records;
  const orderById = new Map(orders.map((o) => [o.id, o]));
  const customerById = new Map(customers.map((c) => [c.id, c]));
  const monthOf = (order: Order) => Number(order.order_date.slice(5, 7));
  const orderOf = (item: OrderItem) => orderById.get(item.order_id) as Order;
  const customerOf = (order: Order) => customerById.get(order.customer_id) as Customer;
  const value = (item: OrderItem) => item.quantity * item.unit_price;
  const notCancelled = items.filter((item) => orderOf(item).status !== "cancelled");
  const delivered = items.filter((item) => orderOf(item).status === "delivered");
  const ordersByCustomer = groupBy(orders, (o) => o.customer_id);
  const buyers = customers.filter((c) => ordersByCustomer.has(c.id)).map((c) => c.name);
  const revenueByProduct = tally(notCancelled, (item) => item.product_id, value);
  const spentByCustomer = tally(delivered, (item) => orderOf(item).customer_id, value);

  return [
    ask(
      "shop.customers-in-city",
      CITIES.filter((city) => customers.some((c) => c.city === city)),
      [
        (city) => `How many customers live in ${city}?`,
        (city) => `What is the number of customers whose city is '${city}'?`,
      ],
      (city) => `SELECT COUNT(*) FROM customers WHERE city = ${sqlText(city)}`,
    ),
    ask(
      "shop.category-price-list",
      CATEGORIES,
      [
        (cat) =>
          `List the name and price of every product in the '${cat}' category, from the most ` +
          "expensive to the cheapest.",
        (cat) =>
          `Show all '${cat}' products with their prices, sorted by price from highest to lowest.`,
      ],
      (cat) =>
        `SELECT name, price FROM products WHERE category = ${sqlText(cat)} ORDER BY price DESC`,
    ),
    ask(
      "shop.cheap-products",
      [6, 8, 10, 12, 15].filter((limit) => products.some((p) => p.price < limit)),
      [
        (limit) => `Which products cost less than ${limit} dollars? Give their names.`,
        (limit) => `Name the products whose price is below $${limit}.`,
      ],
      (limit) => `SELECT name FROM products WHERE price < ${limit}`,
    ),
    ask(
      "shop.orders-of-customer",
      spread(buyers, 15),
      [
        (name) => `How many orders has ${name} placed?`,
        (name) => `Count the orders placed by the customer named ${name}.`,
      ],
      (name) =>
        "SELECT COUNT(*) FROM orders o JOIN customers c ON c.id = o.customer_id " +
        `WHERE c.name = ${sqlText(name)}`,
    ),
    ask(
      "shop.revenue-in-month",
      MONTHS,
      [
        (m) =>
          `What was the total revenue of delivered orders placed in ${monthName(m)}? Revenue ` +
          "is the sum of quantity times unit price over the orders' items.",
        (m) =>
          `Compute the sum of quantity * unit_price over all items of orders placed in ` +
          `${monthName(m)} whose status is 'delivered'.`,
      ],
      (m) =>
        "SELECT SUM(oi.quantity * oi.unit_price) FROM orders o " +
        "JOIN order_items oi ON oi.order_id = o.id " +
        `WHERE o.status = 'delivered' AND ${inMonth("o.order_date", m)}`,
    ),
    ask(
      "shop.top-products-by-revenue",
      [3, 4, 5, 6, 7].filter((k) => clearTop([...revenueByProduct.values()], k)),
      [
        (k) =>
          `Which ${k} products earned the most revenue (quantity times unit price) from orders ` +
          "that were not cancelled? Give each product's name and revenue, highest first.",
        (k) =>
          `List the top ${k} products by revenue over all orders except cancelled ones, with ` +
          "the name and the revenue (sum of quantity * unit_price), in descending order.",
      ],
      (k) =>
        "SELECT p.name, SUM(oi.quantity * oi.unit_price) AS revenue FROM products p " +
        "JOIN order_items oi ON oi.product_id = p.id JOIN orders o ON o.id = oi.order_id " +
        `WHERE o.status <> 'cancelled' GROUP BY p.id ORDER BY revenue DESC LIMIT ${k}`,
    ),
    ask(
      "shop.best-product-in-category",
      CATEGORIES.filter((cat) =>
        clearTop(
          products.filter((p) => p.category === cat).map((p) => revenueByProduct.get(p.id) ?? 0),
          1,
        ),
      ),
      [
        (cat) =>
          `Which product in the '${cat}' category earned the most revenue from orders that ` +
          "were not cancelled? Give its name and the revenue (quantity times unit price).",
        (cat) =>
          `Find the '${cat}' product with the highest total of quantity * unit_price over ` +
          "non-cancelled orders, and give its name and that total.",
      ],
      (cat) =>
        "SELECT p.name, SUM(oi.quantity * oi.unit_price) AS revenue FROM products p " +
        "JOIN order_items oi ON oi.product_id = p.id JOIN orders o ON o.id = oi.order_id " +
        `WHERE o.status <> 'cancelled' AND p.category = ${sqlText(cat)} ` +
        "GROUP BY p.id ORDER BY revenue DESC LIMIT 1",
    ),
    ask(
      "shop.units-per-category-in-month",
      MONTHS,
      [
        (m) =>
          `For each product category, how many units were ordered in ${monthName(m)} ` +
          "(orders of any status)? Give the category and the number of units.",
        (m) =>
          `Give, per category, the total quantity of products ordered in ${monthName(m)}, ` +
          "counting all orders whatever their status.",
      ],
      (m) =>
        "SELECT p.category, SUM(oi.quantity) FROM order_items oi " +
        "JOIN products p ON p.id = oi.product_id JOIN orders o ON o.id = oi.order_id " +
        `WHERE ${inMonth("o.order_date", m)} GROUP BY p.category`,
    ),
    ask(
      "shop.largest-order-of-customer",
      spread(buyers.slice().reverse(), 15),
      [
        (name) =>
          `What is the total value (quantity times unit price) of the largest single order ` +
          `placed by ${name}?`,
        (name) =>
          `Among all orders of ${name}, what is the highest order total, where an order's ` +
          "total is the sum of quantity * unit_price over its items?",
      ],
      (name) =>
        "SELECT MAX(total) FROM (SELECT o.id, SUM(oi.quantity * oi.unit_price) AS total " +
        "FROM orders o JOIN order_items oi ON oi.order_id = o.id " +
        `JOIN customers c ON c.id = o.customer_id WHERE c.name = ${sqlText(name)} GROUP BY o.id)`,
    ),
    ask(
      "shop.low-stock",
      CATEGORIES.flatMap((category) => [25, 50].map((limit) => ({ category, limit }))).filter(
        ({ category, limit }) => products.some((p) => p.category === category && p.stock < limit),
      ),
      [
        ({ category, limit }) =>
          `How many products in the '${category}' category have fewer than ${limit} units in ` +
          "stock?",
        ({ category, limit }) => `Count the '${category}' products whose stock is below ${limit}.`,
      ],
      ({ category, limit }) =>
        `SELECT COUNT(*) FROM products WHERE category = ${sqlText(category)} AND stock < ${limit}`,
    ),
    ask(
      "shop.big-spenders",
      [1500, 2000, 2500, 3000, 4000].filter((limit) => {
        const over = [...spentByCustomer.values()].filter((spent) => spent > limit).length;
        return over > 0 && over < 20;
      }),
      [
        (limit) =>
          `Which customers spent more than ${limit} dollars in total on delivered orders ` +
          "(quantity times unit price over the items)? List their names.",
        (limit) =>
          "Give the names of the customers whose delivered orders add up to more than " +
          `$${limit} (sum of quantity * unit_price).`,
      ],
      (limit) =>
        "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id " +
        "JOIN order_items oi ON oi.order_id = o.id WHERE o.status = 'delivered' " +
        `GROUP BY c.id HAVING SUM(oi.quantity * oi.unit_price) > ${limit}`,
    ),
    ask(
      "shop.orders-by-status-in-month",
      spread(
        MONTHS.flatMap((month) => STATUSES.map((status) => ({ month, status }))).filter(
          ({ month, status }) => orders.some((o) => monthOf(o) === month && o.status === status),
        ),
        20,
      ),
      [
        ({ month, status }) =>
          `How many orders placed in ${monthName(month)} have the status '${status}'?`,
        ({ month, status }) =>
          `Count the '${status}' orders with an order date in ${monthName(month)}.`,
      ],
      ({ month, status }) =>
        `SELECT COUNT(*) FROM orders WHERE status = ${sqlText(status)} AND ` +
        inMonth("order_date", month),
    ),
    ask(
      "shop.top-city-in-month",
      MONTHS.filter((month) => {
        const byCity = tally(
          delivered.filter((item) => monthOf(orderOf(item)) === month),
          (item) => customerOf(orderOf(item)).city,
          value,
        );
        return clearTop([...byCity.values()], 1);
      }),
      [
        (m) =>
          `Customers of which city spent the most on delivered orders placed in ${monthName(m)}? ` +
          "Give the city and the amount (quantity times unit price).",
        (m) =>
          `Find the city whose customers' delivered orders from ${monthName(m)} have the ` +
          "largest total of quantity * unit_price; give the city and that total.",
      ],
      (m) =>
        "SELECT c.city, SUM(oi.quantity * oi.unit_price) AS spent FROM customers c " +
        "JOIN orders o ON o.customer_id = c.id JOIN order_items oi ON oi.order_id = o.id " +
        `WHERE o.status = 'delivered' AND ${inMonth("o.order_date", m)} ` +
        "GROUP BY c.city ORDER BY spent DESC LIMIT 1",
    ),
    ask(
      "shop.unsold-in-month",
      spread(
        MONTHS.flatMap((month) => CATEGORIES.map((category) => ({ month, category }))).filter(
          ({ month, category }) => {
            const sold = new Set(
              items.filter((i) => monthOf(orderOf(i)) === month).map((i) => i.product_id),
            );
            return products.some((p) => p.category === category && !sold.has(p.id));
          },
        ),
        16,
      ),
      [
        ({ month, category }) =>
          `Which products in the '${category}' category were not part of any order placed in ` +
          `${monthName(month)}? Give their names.`,
        ({ month, category }) =>
          `List the names of the '${category}' products that nobody ordered in ` +
          `${monthName(month)} (orders of any status count as ordering).`,
      ],
      ({ month, category }) =>
        `SELECT name FROM products WHERE category = ${sqlText(category)} AND id NOT IN ` +
        "(SELECT oi.product_id FROM order_items oi JOIN orders o ON o.id = oi.order_id " +
        `WHERE ${inMonth("o.order_date", month)})`,
    ),
  ].flat();
}

export const shopDatabase: DatabaseSpec = {
  name: "shop",
  description: "an online shop: customers, products, orders and the items of each order",
  generate(): DatabaseContent {
    const records = generateRecords();
    return {
      tables: [
        { name: "customers", ddl: CUSTOMERS, rows: records.customers },
        { name: "products", ddl: PRODUCTS, rows: records.products },
        { name: "orders", ddl: ORDERS, rows: records.orders },
        { name: "order_items", ddl: ORDER_ITEMS, rows: records.items },
      ],
      questions: questions(records),
    };
  },
};
